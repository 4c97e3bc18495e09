import type { MigrationList } from '../migrator';
import { columnKinds } from '../tables';
import * as m0001 from './migrations/0001_schema';
import * as m0002 from './migrations/0002_token_expiry';
import * as m0003 from './migrations/0003_log_exports';
import * as m0004 from './migrations/0004_fleet_identity';
import * as m0005 from './migrations/0005_fleet_down';
import * as m0006 from './migrations/0006_minimise_learners';
import * as m0007 from './migrations/0007_fleet_media';
import * as m0008 from './migrations/0008_fleet_release';
import * as m0009 from './migrations/0009_fleet_identity_schoolname';
import * as m0010 from './migrations/0010_fleet_settings';
import { tables } from './schema-0001';

export const migrations: MigrationList = [
  ['0001_schema', m0001],
  ['0002_token_expiry', m0002],
  ['0003_log_exports', m0003],
  ['0004_fleet_identity', m0004],
  ['0005_fleet_down', m0005],
  ['0006_minimise_learners', m0006],
  ['0007_fleet_media', m0007],
  ['0008_fleet_release', m0008],
  ['0009_fleet_identity_schoolname', m0009],
  ['0010_fleet_settings', m0010],
];

export const kinds = columnKinds([...tables, ...m0004.fleetIdentityTables, ...m0005.fleetDownTables,
  ...m0007.fleetMediaTables, ...m0008.fleetReleaseTables, ...m0010.fleetSettingsTables]);
export { tables };
