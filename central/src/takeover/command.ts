import { takeover, type Knex } from '@lms/db';
import { loadObjectStoreConfig } from '../config';
import { createObjectStore } from '../objects';
import { copyObjects, formatObjectReport, parseObjectSource, type ObjectReport } from './objects';

/**
 * `migrate-from-mysql` on central: the original's database into DATABASE_URL, then, with --objects-from, its
 * bucket into the store OBJECT_DIR or S3_* names. Exit code 0 when everything was taken, 1 when rows or
 * objects were refused (the report names them).
 */
export async function migrateFromMysql(
  db: Knex,
  args: string[],
  o: { env?: NodeJS.ProcessEnv; out?: (l: string) => void; err?: (l: string) => void } = {},
): Promise<{ code: number; tables: takeover.TakeoverReport; objects?: ObjectReport }> {
  const out = o.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = o.err ?? ((l: string) => process.stderr.write(`${l}\n`));
  const a = takeover.parseTakeoverArgs(args, true, o.env ?? process.env);
  const from = a.objectsFrom ? parseObjectSource(a.objectsFrom) : undefined;
  // Before any row is copied: a wrong bucket name must not leave a copied database behind it.
  await from?.check();
  const tables = await takeover.takeOverDatabase(db, takeover.centralProfile(), a, out, err);
  let objects: ObjectReport | undefined;
  if (from) {
    objects = await copyObjects(from, createObjectStore(loadObjectStoreConfig(o.env ?? process.env)), {
      dryRun: a.dryRun,
      again: a.again,
      progress: err,
    });
    for (const line of formatObjectReport(objects, a.dryRun)) out(line);
  }
  if (!a.dryRun) {
    out('school users keep the password hashes they had; while any classroom box still runs the existing system, '
      + 'set SCHOOLUSER_PASSWORD_FORMAT=bcrypt-md5 (see docs/moving-from-the-existing-system.md)');
  }
  const refused = tables.tables.some((t) => t.refused > t.resolved) || (objects?.refused.length ?? 0) > 0;
  return { code: refused ? 1 : 0, tables, objects };
}
