import type { Knex } from 'knex';
import { createTables, dropTables, type TableSpec } from '../../tables';

/**
 * The classroom boxes of the fleet, each with a credential of its own: registered for one school (with a
 * one-time enrolment code, kept only as its SHA-256), enrolled (the SHA-256 of a secret the box generated;
 * the secret itself never leaves the box), or revoked. What each contact reports (version, clock skew,
 * free disk, rows waiting,
 * failures in a row) is kept on the row, so that an operator sees the fleet's state, and so is the last piece of
 * activity central imported from the box (`ackedseq`, a number the box counts, never a time).
 *
 * Expand only: new tables; the previous release neither reads nor writes them.
 */
export const boxTables: TableSpec[] = [
  {
    name: 'boxes',
    primary: ['boxid'],
    unique: [['enrolcodehash']],
    indexes: [['schoolid', 'createdat']],
    columns: [
      { name: 'boxid', type: 'string', length: 36 },
      { name: 'schoolid', type: 'string', length: 36 },
      { name: 'name', type: 'string', length: 200 },
      /** registered, enrolled or revoked. */
      { name: 'state', type: 'string', length: 16, default: 'registered' },
      { name: 'secrethash', type: 'string', length: 64, nullable: true },
      { name: 'enrolcodehash', type: 'string', length: 64, nullable: true },
      { name: 'enrolcodeexpiresat', type: 'timestamp', nullable: true },
      { name: 'createdat', type: 'timestamp', default: 'now' },
      { name: 'createdby', type: 'string', length: 36, nullable: true },
      { name: 'enrolledat', type: 'timestamp', nullable: true },
      { name: 'revokedat', type: 'timestamp', nullable: true },
      { name: 'lastcontactat', type: 'timestamp', nullable: true },
      { name: 'version', type: 'string', length: 64, nullable: true },
      { name: 'protocol', type: 'integer', nullable: true },
      /** Central's time minus the box's, at the last contact. */
      { name: 'clockskewms', type: 'double', nullable: true },
      { name: 'freediskbytes', type: 'double', nullable: true },
      { name: 'lasterror', type: 'text', nullable: true },
      { name: 'lasterrorat', type: 'timestamp', nullable: true },
      /** The last box-side sequence number of activity central imported (the box's own counter). */
      { name: 'ackedseq', type: 'double', default: 0 },
      { name: 'lastupat', type: 'timestamp', nullable: true },
      { name: 'lastuprows', type: 'integer', nullable: true },
      { name: 'lastupbytes', type: 'integer', nullable: true },
      { name: 'lastdownat', type: 'timestamp', nullable: true },
      { name: 'lastdownbytes', type: 'integer', nullable: true },
      /** Journal entries the box holds that central has not acknowledged, as the box said at its last contact. */
      { name: 'rowswaiting', type: 'integer', nullable: true },
      /** Failed syncs in a row, as the box said at its last contact (0 after a good one). */
      { name: 'failures', type: 'integer', default: 0 },
      /** The last contact at which the box's previous sync had gone well, or the last piece imported. */
      { name: 'lastgoodat', type: 'timestamp', nullable: true },
    ],
  },
];

export async function up(knex: Knex): Promise<void> {
  await createTables(knex, boxTables);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, boxTables);
}
