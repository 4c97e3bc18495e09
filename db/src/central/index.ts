import type { MigrationList } from '../migrator';
import { columnKinds } from '../tables';
import * as m0001 from './migrations/0001_schema';
import * as m0002 from './migrations/0002_rbac';
import * as m0003 from './migrations/0003_logimportpending';
import * as m0004 from './migrations/0004_authoring';
import * as m0005 from './migrations/0005_lessons';
import * as m0006 from './migrations/0006_people';
import * as m0007 from './migrations/0007_media';
import * as m0008 from './migrations/0008_report_indexes';
import * as m0009 from './migrations/0009_usage_covering_index';
import * as m0010 from './migrations/0010_log_archives';
import * as m0011 from './migrations/0011_questionfeedback';
import * as m0015 from './migrations/0015_quiz_results';
import * as m0016 from './migrations/0016_redundant_indexes';
import * as m0017 from './migrations/0017_signin_time_indexes';
import * as m0018 from './migrations/0018_app_usage_totals';
import * as m0019 from './migrations/0019_boxes';
import * as m0020 from './migrations/0020_access_record';
import * as m0021 from './migrations/0021_learner_erasure';
import * as m0022 from './migrations/0022_fleet_down_versions';
import * as m0023 from './migrations/0023_box_releases';
import * as m0024 from './migrations/0024_fleet_operations';
import { appUsageTotalTables } from './app-usage-totals';
import { quizResultTables } from './quiz-results';
import { tables } from './schema-0001';

export const migrations: MigrationList = [
  ['0001_schema', m0001],
  ['0002_rbac', m0002],
  ['0003_logimportpending', m0003],
  ['0004_authoring', m0004],
  ['0005_lessons', m0005],
  ['0006_people', m0006],
  ['0007_media', m0007],
  ['0008_report_indexes', m0008],
  ['0009_usage_covering_index', m0009],
  ['0010_log_archives', m0010],
  ['0011_questionfeedback', m0011],
  ['0015_quiz_results', m0015],
  ['0016_redundant_indexes', m0016],
  ['0017_signin_time_indexes', m0017],
  ['0018_app_usage_totals', m0018],
  ['0019_boxes', m0019],
  ['0020_access_record', m0020],
  ['0021_learner_erasure', m0021],
  ['0022_fleet_down_versions', m0022],
  ['0023_box_releases', m0023],
  ['0024_fleet_operations', m0024],
];

// Tables added after 0001 join the list so that their JSON and timestamp columns read back normalised too.
export const kinds = columnKinds([
  ...tables, ...m0003.logImportPendingTables, ...m0007.mediaTables, ...m0008.contentPushTables,
  ...m0010.logArchiveTables, ...m0011.questionFeedbackColumns, ...quizResultTables, ...appUsageTotalTables,
  ...m0019.boxTables,
  ...m0020.accessRecordTables,
  ...m0021.learnerErasureTables,
  ...m0022.fleetDownVersionTables,
  ...m0023.boxReleaseTables,
  ...m0024.fleetOperationTables,
  ...m0024.fleetOperationColumns,
]);
export { tables };
export { backfillQuizResults, fillQuizResults, QUIZ_RESULTS } from './quiz-results';
export { APP_USAGE_TOTALS, backfillAppUsageTotals } from './app-usage-totals';
export { ROLES, TITLES, PERMISSIONS, GRANTS, SUPERADMIN_USERNAME } from './migrations/0002_rbac';
