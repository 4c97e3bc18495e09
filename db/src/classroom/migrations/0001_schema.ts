import type { Knex } from 'knex';
import { createTables, dropTables } from '../../tables';
import { tables } from '../schema-0001';

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, tables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, tables);
}
