import type { Knex } from 'knex';

/**
 * Each recorded access token carries its expiry, so that sign-ins can drop the rows of tokens that can
 * no longer be used (the table otherwise grows by one row per sign-in for the life of the box). Rows
 * recorded before this migration have no expiry and are kept until their user logs out or is disabled.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tokens', (t) => {
    t.string('expires_at', 30).nullable();
    t.index(['lmsuserid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tokens', (t) => {
    t.dropIndex(['lmsuserid']);
    t.dropColumn('expires_at');
  });
}
