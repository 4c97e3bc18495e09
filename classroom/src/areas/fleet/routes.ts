import { httpError, noInput, staff } from '@lms/shared';
import type { Knex } from '@lms/db';
import { z } from 'zod';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { FleetError } from '../../fleet/client';
import { EnrolInputError, enrolBox } from '../../fleet/commands';
import { readIdentity } from '../../fleet/identity';

/**
 * The box's own sync state and the teacher page's two actions on it (docs/classroom-box.md): what the page
 * shows, "Sync now" (a run of the box's agent, or the run in progress) and the enrolment of a box not yet
 * enrolled. Staff of the school only (superadmin, admin, teacher; never learners). Scope: this box alone —
 * nothing in a request names a box, a school or a learner, and what is answered is the box's own record.
 * Routes beyond the catalogue.
 */
const extra = { addition: true, tags: ['fleet'] };
/** The bodies are a central address and a code, or nothing. */
const SMALL_BODY = '2kb';

const enrolBody = z.strictObject({
  central: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(500),
  code: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(40),
  allowhttp: z.boolean().optional(),
});
const emptyBody = z.strictObject({});

const ALREADY = 'This box is already enrolled; to enrol it again, run lms-classroom enroll on the box';
const AGENT_OFF = 'The sync agent is switched off on this box (FLEET_SYNC)';

export interface BoxSyncState {
  enrolled: boolean;
  centralurl?: string;
  boxid?: string;
  schoolid?: string;
  schoolname?: string | null;
  enrolledat?: string;
  /** Central's time of the last contact that central answered. */
  lastcontactat?: string | null;
  /** When central last acknowledged a piece of activity (the box's clock). */
  lastackat?: string | null;
  /** Journal entries central has not acknowledged. */
  rowswaiting?: number;
  /** When the box last applied content or a roster from central (the box's clock). */
  lastdownat?: string | null;
  lasterror?: string | null;
  clockskewms?: number | null;
  /** Whether the box runs a sync agent that "Sync now" can ask. */
  agent: boolean;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export async function boxSyncState(db: Knex, agent: boolean): Promise<BoxSyncState> {
  const identity = await readIdentity(db);
  if (!identity) return { enrolled: false, agent };
  const waiting = (await db('fleetchanges').where('seq', '>', identity.ackedseq).count({ n: '*' }).first()) as
    | { n: number | string } | undefined;
  const school = (await db('schools').where({ schoolid: identity.schoolid }).first('schoolname')) as
    | { schoolname: string | null } | undefined;
  const down = (await db('fleetdown').max({ at: 'appliedat' }).first()) as { at: unknown } | undefined;
  return {
    enrolled: true, agent, centralurl: identity.centralurl, boxid: identity.boxid, schoolid: identity.schoolid,
    schoolname: identity.schoolname ?? school?.schoolname ?? null, enrolledat: identity.enrolledat,
    lastcontactat: identity.lastcontactat,
    lastackat: identity.lastupat, rowswaiting: Number(waiting?.n ?? 0), lastdownat: iso(down?.at),
    lasterror: identity.lasterror, clockskewms: identity.clockskewms,
  };
}

/** A failure of central or of the link, in the agent's words: 502, never 401 (the teacher's sign-in is fine). */
const failed = (err: unknown) =>
  httpError(err instanceof FleetError && err.status >= 400 && err.status < 500 && err.status !== 429 ? 400 : 502,
    err instanceof Error ? err.message : String(err));

export const fleetRoutes: ClassroomRoute[] = [
  route('GET', '/fleet/state', staff(), noInput, ({ db, agent }) => boxSyncState(db, !!agent),
    { ...extra, summary: "the box's own sync state: enrolment, last contact, acknowledgement, changes waiting" }),
  route('POST', '/fleet/sync', staff(), { body: emptyBody }, async ({ db, agent }) => {
    if (!agent) throw httpError(409, AGENT_OFF);
    if (!(await readIdentity(db))) throw httpError(409, 'This box is not enrolled at central');
    try {
      await agent.syncNow();
    } catch (err) {
      throw failed(err);
    }
    return boxSyncState(db, true);
  }, { ...extra, bodyLimit: SMALL_BODY, summary: "a sync run of the box's agent now (or the run in progress)" }),
  route('POST', '/fleet/enrol', staff(), { body: enrolBody }, async ({ db, config, agent, body }) => {
    // Enrolling again from a page would let any teacher move the box to another central: the command only.
    if (await readIdentity(db)) throw httpError(409, ALREADY);
    let answer;
    try {
      answer = await enrolBox(db, { central: body.central, code: body.code, allowHttp: !!body.allowhttp },
        { timeoutMs: config.fleet.requestTimeoutMs });
    } catch (err) {
      if (err instanceof EnrolInputError) throw httpError(400, err.message);
      throw failed(err);
    }
    // The first run now rather than at the agent's next turn; its outcome shows in the state.
    void agent?.syncNow().catch(() => undefined);
    return { boxid: answer.boxid, schoolid: answer.schoolid, schoolname: answer.schoolname };
  }, { ...extra, bodyLimit: SMALL_BODY, summary: 'enrol this box with a code from the fleet page, as enroll does' }),
];
