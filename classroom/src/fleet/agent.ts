import fs from 'node:fs';
import type { Knex } from '@lms/db';
import type { Logger } from '@lms/shared';
import { VERSION } from '../areas/app/routes';
import { FleetError, contact } from './client';
import { readIdentity, recordContact } from './identity';
import { syncUp, type UpResult } from './up';
import { standingRefusal, syncDown, type DownResult } from './down';
import { syncRelease } from './release';
import { readApplied, takeSettings } from './settings';
import { collectDiagnostics, sendDiagnostics } from './diagnostics';
import type { FleetSettings } from '@lms/shared';

/** What a run did: the pieces sent up, and what it took from central. */
export type SyncResult = UpResult & { down?: DownResult };

/**
 * The sync agent: a timer inside the classroom server process (no unit of its own, no listening port; the box
 * dials out). While the box is enrolled, each run makes one contact (central's time, and what central holds
 * of the box's journal), then sends the waiting pieces. Runs follow each other with jitter; a failed run
 * backs off exponentially, honouring central's Retry-After, up to the settings' ceiling. Never two runs at
 * once: a run asked for while one is in progress joins it.
 */
export interface AgentSettings {
  intervalMs: number;
  pieceRows: number;
  requestTimeoutMs: number;
  /** The first retry after a failure; doubled on each further failure up to `maxBackoffMs`. */
  minBackoffMs: number;
  maxBackoffMs: number;
  dataDir: string;
  /** Where the down path puts the lesson media (the media route's MEDIA_DIR); no media are fetched without it. */
  mediaDir?: string;
  fetch?: typeof fetch;
  /** Take settings from central (FLEET_REMOTE_SETTINGS; default on). */
  remoteSettings?: boolean;
  /** Applies what the agent itself does not run (the log level, the log files' retention). */
  onSettings?: (values: FleetSettings) => void;
  /** The daily log files, whose tail a diagnostics report carries. */
  logDir?: string;
}

export interface SyncAgent {
  /** One run now (or the one in progress); resolves with what it sent, or rejects with the failure. */
  syncNow(): Promise<SyncResult | undefined>;
  stop(): void;
  /** Failures in a row since the last good run. */
  readonly failures: number;
  /** The wait before the next run, as last scheduled (undefined before the first). */
  readonly nextDelayMs: number | undefined;
  /** The interval between good runs now (central's setting, or the box's own). */
  readonly intervalMs: number;
}

const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

function freeDisk(dir: string): number | undefined {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** Journal entries not yet acknowledged by central (as the box last recorded central's acknowledgement). */
async function rowsWaiting(db: Knex, acked: number): Promise<number | undefined> {
  try {
    const row = (await db('fleetchanges').where('seq', '>', acked).count({ n: '*' }).first()) as
      | { n: number | string }
      | undefined;
    return Number(row?.n ?? 0);
  } catch {
    return undefined;
  }
}

export function startSyncAgent(db: Knex, s: AgentSettings, logger: Logger, o: { start?: boolean } = {}): SyncAgent {
  let running: Promise<SyncResult | undefined> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  let nextDelayMs: number | undefined;
  const client = { timeoutMs: s.requestTimeoutMs, fetch: s.fetch };
  const remote = s.remoteSettings !== false;
  let intervalMs = s.intervalMs;
  const applySettings = (values: FleetSettings) => {
    intervalMs = values.syncintervalseconds ? values.syncintervalseconds * 1000 : s.intervalMs;
    s.onSettings?.(values);
  };

  const once = async (): Promise<SyncResult | undefined> => {
    const identity = await readIdentity(db);
    if (!identity) return undefined;
    try {
      let applied = await readApplied(db);
      const answer = await contact(identity.centralurl, identity, {
        version: VERSION, boxtime: new Date().toISOString(), freediskbytes: freeDisk(s.dataDir),
        lasterror: identity.lasterror, failures,
        rowswaiting: await rowsWaiting(db, identity.ackedseq),
        // What this box runs with, reported at the contact after it took it (central shows it as applied); a box
        // that takes no settings says 0, so that central does not go on showing an older version as applied.
        settingsversion: remote ? applied.version : 0,
      }, client);
      await recordContact(db, { lastcontactat: answer.centraltime, clockskewms: answer.clockskewms,
        lasterror: identity.lasterror });
      if (remote && answer.settings && answer.settings.version !== applied.version) {
        applied = await takeSettings(db, answer.settings);
        applySettings(applied.values);
        logger.info({ version: applied.version, settings: applied.values }, 'fleet: settings taken from central');
      }
      const up = await syncUp(db, identity, answer.ackedseq, { ...client, pieceRows: s.pieceRows });
      if (up.pieces) logger.info({ ...up }, 'fleet: activity sent to central');
      const down = await syncDown(db, identity, s.dataDir, client, s.mediaDir);
      if (down.applied.length || down.refused.length) logger.info({ ...down }, 'fleet: content taken from central');
      await syncRelease(db, identity, answer.release, client);
      for (const diagnosticid of answer.diagnostics ?? []) {
        // A report that does not get through is asked for again in the next contact's answer; the sync itself
        // went well, so it does not count as a failed one.
        try {
          const report = await collectDiagnostics(db, { logDir: s.logDir, freediskbytes: freeDisk(s.dataDir),
            settings: applied });
          await sendDiagnostics(identity, diagnosticid, report, client);
          logger.info({ diagnosticid, lines: report.logs.length }, 'fleet: diagnostics sent to central');
        } catch (err) {
          logger.warn({ diagnosticid, err: (err as Error)?.message }, 'fleet: diagnostics not sent');
        }
      }
      // A refused package stays the box's last error (reported at each contact) until central's version changes.
      await recordContact(db, { lasterror: await standingRefusal(db) });
      return { ...up, down };
    } catch (err) {
      const words = err instanceof FleetError ? err.message : String((err as Error)?.message ?? err);
      await recordContact(db, { lasterror: words }).catch(() => undefined);
      throw err;
    }
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    nextDelayMs = ms;
    clearTimeout(timer);
    timer = setTimeout(() => void run().catch(() => undefined), ms);
    timer.unref();
  };

  const run = (): Promise<SyncResult | undefined> => {
    if (running) return running;
    running = once().then(
      (r) => {
        failures = 0;
        schedule(jitter(intervalMs));
        return r;
      },
      (err: unknown) => {
        failures += 1;
        const retryAfter = err instanceof FleetError && err.retryAfterSeconds ? err.retryAfterSeconds * 1000 : 0;
        // A refused credential does not heal by retrying soon: the slowest pace until someone enrols again.
        const refused = err instanceof FleetError && err.status === 401;
        const backoff = refused ? s.maxBackoffMs
          : Math.min(s.maxBackoffMs, s.minBackoffMs * 2 ** Math.min(failures - 1, 20));
        schedule(Math.max(jitter(backoff), retryAfter));
        logger.warn({ err: (err as Error)?.message, failures }, 'fleet: sync failed');
        throw err;
      },
    ).finally(() => {
      running = null;
    });
    return running;
  };

  // A restart runs with what central last set, before its first contact.
  if (remote) void readApplied(db).then((a) => applySettings(a.values), () => undefined);
  if (o.start !== false) schedule(jitter(Math.min(s.intervalMs, 30_000)));
  return {
    syncNow: run,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    get failures() {
      return failures;
    },
    get nextDelayMs() {
      return nextDelayMs;
    },
    get intervalMs() {
      return intervalMs;
    },
  };
}
