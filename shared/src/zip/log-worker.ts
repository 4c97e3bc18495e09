import { parentPort } from 'node:worker_threads';
import { ZipError } from './errors';
import { readLogZip } from './log-read';
import { encodeBatch, type ToMain, type ToWorker, type WorkerInput } from './log-read-thread';

// The worker side of a LogReader: boots, waits for the file to read, reads it with readLogZip and posts
// each batch, at most a few ahead of what the main thread has acknowledged, so that memory stays bounded
// by those batches.

const port = parentPort!;
const post = (m: ToMain) => port.postMessage(m);

let inFlight = 0;
let wake: (() => void) | null = null;
port.on('message', (m: ToWorker) => {
  if (m.type === 'ack') {
    inFlight -= 1;
    const w = wake;
    wake = null;
    w?.();
  } else if (m.type === 'start') {
    read(m.input);
  }
});

function read(input: WorkerInput): void {
  readLogZip(
    { path: input.path },
    {
      batchSize: input.batchSize,
      limits: input.limits,
      onBatch: async (batch) => {
        while (inFlight >= input.ahead) await new Promise<void>((resolve) => { wake = resolve; });
        inFlight += 1;
        post({ type: 'batch', batch: encodeBatch(batch) });
      },
      onLogFile: (file) => post({ type: 'logfile', file }),
    },
  ).then(
    (summary) => post({ type: 'done', summary }),
    (err: unknown) => {
      if (err instanceof ZipError) post({ type: 'error', zip: true, code: err.code, message: err.message });
      else post({ type: 'error', zip: false, message: err instanceof Error ? err.message : String(err) });
    },
  );
}
