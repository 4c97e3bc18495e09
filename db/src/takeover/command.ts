import fs from 'node:fs';
import type { Knex } from 'knex';
import { formatReport, runTakeover, type TakeoverProfile, type TakeoverReport } from './run';

export interface TakeoverArgs {
  /** The source URL with its password put in (from the URL, TAKEOVER_SOURCE_PASSWORD or a file). */
  source: string;
  /** The object source with its secret put in, for an s3:// one (TAKEOVER_OBJECTS_SECRET or a file). */
  objectsFrom?: string;
  dryRun: boolean;
  again: boolean;
  /** Said to the operator before the copy starts: secrets given on the command line. */
  warnings: string[];
}

export const TAKEOVER_USAGE = [
  'usage: npm run migrate-from-mysql -w <central|classroom> -- --source mysql://USER@HOST:PORT/DATABASE',
  '         [--source-password-file FILE] [--objects-from s3://ACCESS@HOST:PORT/BUCKET | --objects-from DIR]',
  '         [--objects-secret-file FILE] [--dry-run] [--again]',
  '  the database password: TAKEOVER_SOURCE_PASSWORD or --source-password-file (first line of the file);',
  '  the S3 secret key: TAKEOVER_OBJECTS_SECRET or --objects-secret-file. A password written in the URL works too,',
  '  but stays in the process list for the whole run.',
].join('\n');

const SOURCE_PASSWORD = 'TAKEOVER_SOURCE_PASSWORD';
const OBJECTS_SECRET = 'TAKEOVER_OBJECTS_SECRET';

function readSecretFile(file: string, option: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${option} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const secret = text.split(/\r?\n/)[0];
  if (!secret) throw new Error(`${option} ${file}: the first line is empty`);
  return secret;
}

/**
 * Puts the secret into `url`'s password when the URL carries none. A secret written in the URL itself is
 * accepted but warned about: the command line is readable by every user of the host for the whole run.
 */
interface SecretSources {
  option: string;
  fileOption: string;
  envName: string;
  fromFile?: string;
  fromEnv?: string;
}

function withSecret(url: string, s: SecretSources, warnings: string[]): string {
  const { option, fileOption, envName, fromFile, fromEnv } = s;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // the parser of the URL's own kind says what is wrong with it
  }
  const given = [u.password ? `the URL of ${option}` : '', fromFile ? fileOption : '', fromEnv ? envName : '']
    .filter(Boolean);
  if (given.length > 1) {
    throw new Error(`${option}: the secret is given more than once (${given.join(', ')}); give it once`);
  }
  if (u.password) {
    warnings.push(`warning: the secret in ${option} is visible in the process list while this runs; `
      + `give it in ${envName} or ${fileOption} instead`);
    return url;
  }
  const secret = fromFile ?? fromEnv;
  if (secret === undefined) return url;
  u.password = encodeURIComponent(secret);
  return u.toString();
}

export function parseTakeoverArgs(args: string[], objects: boolean, env: NodeJS.ProcessEnv = {}): TakeoverArgs {
  const out: {
    source?: string; objectsFrom?: string; dryRun: boolean; again: boolean; passwordFile?: string; secretFile?: string;
  } = { dryRun: false, again: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (!v) throw new Error(`${a} needs a value\n${TAKEOVER_USAGE}`);
      return v;
    };
    const is = (name: string) => a === name || a.startsWith(`${name}=`);
    if (is('--source')) out.source = value();
    else if (is('--source-password-file')) out.passwordFile = value();
    else if (objects && is('--objects-from')) out.objectsFrom = value();
    else if (objects && is('--objects-secret-file')) out.secretFile = value();
    else if (a === '--dry-run') out.dryRun = true;
    else if (a === '--again') out.again = true;
    else throw new Error(`unknown argument ${a}\n${TAKEOVER_USAGE}`);
  }
  if (!out.source) throw new Error(`--source is required\n${TAKEOVER_USAGE}`);
  const warnings: string[] = [];
  const source = withSecret(out.source, {
    option: '--source', fileOption: '--source-password-file', envName: SOURCE_PASSWORD,
    fromFile: out.passwordFile && readSecretFile(out.passwordFile, '--source-password-file'),
    fromEnv: env[SOURCE_PASSWORD] || undefined,
  }, warnings);
  let objectsFrom = out.objectsFrom;
  if (objectsFrom?.startsWith('s3://')) {
    objectsFrom = withSecret(objectsFrom, {
      option: '--objects-from', fileOption: '--objects-secret-file', envName: OBJECTS_SECRET,
      fromFile: out.secretFile && readSecretFile(out.secretFile, '--objects-secret-file'),
      fromEnv: env[OBJECTS_SECRET] || undefined,
    }, warnings);
  } else if (out.secretFile) {
    throw new Error('--objects-secret-file goes with --objects-from s3://…');
  }
  return { source, objectsFrom, dryRun: out.dryRun, again: out.again, warnings };
}

/** The database part of `migrate-from-mysql`: copies, prints the report, answers it. */
export async function takeOverDatabase(
  db: Knex,
  profile: TakeoverProfile,
  args: TakeoverArgs,
  out: (l: string) => void,
  err: (l: string) => void,
): Promise<TakeoverReport> {
  for (const w of args.warnings) err(w);
  const report = await runTakeover({
    db,
    sourceUrl: args.source,
    profile,
    dryRun: args.dryRun,
    again: args.again,
    progress: err,
  });
  for (const line of formatReport(report)) out(line);
  return report;
}
