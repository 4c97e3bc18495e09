import type { MigrationList } from '../migrator';
import { columnKinds } from '../tables';
import * as m0001 from './migrations/0001_schema';
import { tables } from './schema-0001';

export const migrations: MigrationList = [['0001_schema', m0001]];

export const kinds = columnKinds(tables);
