import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, type Knex } from '@lms/db';
import { createObjectStore, isObjectNotFound, type ObjectStore, type ObjectStoreConfig } from '../objects';
import { seedDemo } from './demo';

/**
 * The demo's media files (the lesson videos, the option and story pictures, the lesson plan). They ship with the
 * classroom server's demo, whose seed copies them into its media folder; central's seed puts the same files in its
 * object store, so that the content sync (`npm run sync-content -- --media-dir …`) finds every file the demo
 * curriculum names where it looks for them, on central.
 */
export const DEMO_MEDIA_DIR = path.join(repoRoot, 'classroom', 'demo-media');

/** The files of a folder and its sub-folders, `/`-separated and relative to it; hidden names are left out. */
function filesOf(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const name = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...filesOf(dir, name));
    else if (entry.isFile()) out.push(name);
  }
  return out.sort();
}

async function sizeIn(store: ObjectStore, key: string): Promise<number | undefined> {
  try {
    return (await store.stat(key)).size;
  } catch (err) {
    if (isObjectNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Puts the demo media into central's object store under the names the demo's documents and questions give them;
 * a file already there with the same size is left alone (the seed runs again on every `make run`). Answers the
 * line to print.
 */
export async function putDemoMedia(store: ObjectStore, where: string, from = DEMO_MEDIA_DIR): Promise<string> {
  let stored = 0;
  let kept = 0;
  for (const name of filesOf(from)) {
    const bytes = fs.readFileSync(path.join(from, name));
    if ((await sizeIn(store, name)) === bytes.length) {
      kept += 1;
      continue;
    }
    await store.put(name, bytes);
    stored += 1;
  }
  const counts = `${stored} stored, ${kept} already there`;
  return `central: demo media in the object store (${where}): ${counts} (served at /media/<name>)`;
}

/** `seed-demo` on central: the demo data set, then its media in the object store the service is configured with. */
export async function seedDemoWithMedia(db: Knex, config: Readonly<ObjectStoreConfig>): Promise<string[]> {
  const lines = await seedDemo(db);
  const where = config.kind === 's3' ? `bucket ${config.bucket}` : config.dir;
  return [...lines, await putDemoMedia(createObjectStore(config), where)];
}
