import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@lms/db';

export const VERSION = '1.0.0';

/** The build the running code came from: written by `make build` (commit and time), 'dev' otherwise. */
export function buildInfo(): { version: string; build: string } {
  try {
    const info = JSON.parse(fs.readFileSync(path.join(repoRoot, 'build-info.json'), 'utf8')) as { build?: string };
    return { version: VERSION, build: info.build ?? 'dev' };
  } catch {
    return { version: VERSION, build: 'dev' };
  }
}
