export * from './run';
export * from './profiles';
export { parseMysqlUrl } from './source';
export { convert, unwrapJson, mysqlTimeToIso } from './transform';
export {
  createOriginalSchema,
  createScratchMysql,
  insertOriginalRows,
  originalTableNames,
  testMysqlUrl,
  mysqlAnswers,
  type ScratchMysql,
} from './original-schema';
export * from './command';
