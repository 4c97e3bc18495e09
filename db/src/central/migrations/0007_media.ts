import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * Claims on media object keys. A media upload streams for minutes into the object store before its
 * document row can be written; meanwhile a claim `name:<key>` stops a second upload of the same name
 * (on this instance or another) from writing the same object, and a claim `url:<signature>` marks a
 * presigned upload URL of the folder store as used, so that it admits one upload only. Claims lapse at
 * `expires_at`: a crashed upload's claim does not hold its name for ever.
 */
export const mediaTables: TableSpec[] = [
  {
    name: 'mediaclaims',
    primary: ['claim'],
    indexes: [['expires_at']],
    columns: [
      { name: 'claim', type: 'string', length: 300 },
      { name: 'expires_at', type: 'timestamp' },
      { name: 'created_at', type: 'timestamp', nullable: true, default: 'now' },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, mediaTables);
  // The name checks of every upload and the media routes look documents up by name.
  await knex.schema.alterTable('documents', (t) => {
    t.index(['documentname'], 'documents_documentname_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('documents', (t) => {
    t.dropIndex(['documentname'], 'documents_documentname_idx');
  });
  await dropTables(knex, mediaTables);
}
