import * as central from './central';
import * as classroom from './classroom';

export { central, classroom };
export * from './knex';
export * from './read';
export * from './migrator';
export * from './tables';
export type { Knex } from 'knex';
export * from './testing';
export * from './demo';
export * from './commands';
export * from './like';
export * from './json';
export * from './errors';
export * from './backup';
export * from './health';
export * as takeover from './takeover';
export * from './batch';
