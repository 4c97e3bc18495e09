import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** s3rver's built-in account. */
export const S3_KEY = 'S3RVER';

export interface S3Sandbox {
  /** A scratch folder of the test file (s3rver keeps its data below it). */
  tmp: string;
  /** The S3-compatible server's address on loopback. */
  origin: string;
  /** An object-store configuration for one bucket of that server. */
  s3(bucket: string): {
    kind: 's3';
    endpoint: string;
    accessKey: string;
    secretKey: string;
    bucket: string;
    region: string;
  };
  close(): Promise<void>;
}

/** A real S3-compatible server on a free loopback port, with a scratch folder, for one test file. */
export async function startS3Sandbox(prefix: string): Promise<S3Sandbox> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmp, 's3rver') });
  const { port } = await server.run();
  const origin = `http://127.0.0.1:${port}`;
  return {
    tmp,
    origin,
    s3: (bucket) => ({
      kind: 's3',
      endpoint: origin,
      accessKey: S3_KEY,
      secretKey: S3_KEY,
      bucket,
      region: 'us-east-1',
    }),
    async close() {
      await server.close();
      await fsp.rm(tmp, { recursive: true, force: true });
    },
  };
}
