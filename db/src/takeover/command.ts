import type { Knex } from 'knex';
import { formatReport, runTakeover, type TakeoverProfile, type TakeoverReport } from './run';

export interface TakeoverArgs {
  source: string;
  objectsFrom?: string;
  dryRun: boolean;
  again: boolean;
}

export const TAKEOVER_USAGE =
  'usage: npm run migrate-from-mysql -w <central|classroom> -- --source mysql://USER:PASS@HOST:PORT/DATABASE [--objects-from s3://ACCESS:SECRET@HOST:PORT/BUCKET | --objects-from DIR] [--dry-run] [--again]';

export function parseTakeoverArgs(args: string[], objects: boolean): TakeoverArgs {
  const out: Partial<TakeoverArgs> = { dryRun: false, again: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (!v) throw new Error(`${a} needs a value\n${TAKEOVER_USAGE}`);
      return v;
    };
    if (a === '--source' || a.startsWith('--source=')) out.source = value();
    else if (objects && (a === '--objects-from' || a.startsWith('--objects-from='))) out.objectsFrom = value();
    else if (a === '--dry-run') out.dryRun = true;
    else if (a === '--again') out.again = true;
    else throw new Error(`unknown argument ${a}\n${TAKEOVER_USAGE}`);
  }
  if (!out.source) throw new Error(`--source is required\n${TAKEOVER_USAGE}`);
  return out as TakeoverArgs;
}

/** The database part of `migrate-from-mysql`: copies, prints the report, answers it. */
export async function takeOverDatabase(db: Knex, profile: TakeoverProfile, args: TakeoverArgs, out: (l: string) => void, err: (l: string) => void): Promise<TakeoverReport> {
  const report = await runTakeover({ db, sourceUrl: args.source, profile, dryRun: args.dryRun, again: args.again, progress: err });
  for (const line of formatReport(report)) out(line);
  return report;
}
