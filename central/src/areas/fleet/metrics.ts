import type { Knex } from '@lms/db';
import type { Metrics } from '@lms/shared';

const STATES = ['registered', 'enrolled', 'revoked'] as const;

const ms = (v: unknown): number | null => (v === null || v === undefined ? null : new Date(v as string).getTime());

/**
 * The fleet at each scrape (docs/operations.md, "The fleet"). No label names a box: 2,000 boxes as label
 * values would be 2,000 series per metric. The figures are the fleet's worst (a maximum) or its sum, so
 * that an alert fires when any box is off; the fleet page and `GET /fleet/boxes` name which box.
 */
export function fleetMetrics(metrics: Metrics, db: () => Knex): void {
  metrics.gauge('lms_fleet_boxes', 'Boxes of the fleet by state (registered, enrolled, revoked)', ['state'],
    async () => {
      const rows = (await db()('boxes').select('state').count({ n: '*' }).groupBy('state')) as
        Array<{ state: string; n: number | string }>;
      const by = new Map(rows.map((r) => [r.state, Number(r.n)]));
      return STATES.map((state) => ({ labels: { state }, value: by.get(state) ?? 0 }));
    });
  const enrolled = async () =>
    (await db()('boxes').where({ state: 'enrolled' })
      .select('enrolledat', 'lastgoodat', 'lastcontactat', 'failures', 'clockskewms', 'rowswaiting')) as
      Array<Record<string, unknown>>;
  const worst = (f: (r: Record<string, unknown>, now: number) => number | null) => async () => {
    const now = Date.now();
    const values = (await enrolled()).map((r) => f(r, now)).filter((v): v is number => v !== null);
    return [{ value: values.length ? Math.max(...values) : 0 }];
  };
  metrics.gauge('lms_fleet_box_seconds_since_good_sync',
    'Seconds since the last good sync of the enrolled box that has gone longest without one (since its ' +
      'enrolment when it never had one); 0 without enrolled boxes', [],
    worst((r, now) => {
      const at = ms(r.lastgoodat) ?? ms(r.enrolledat);
      return at === null ? null : Math.max(0, (now - at) / 1000);
    }));
  metrics.gauge('lms_fleet_box_seconds_since_contact',
    'Seconds since the last contact of the enrolled box silent the longest (since its enrolment when it ' +
      'never made one)', [],
    worst((r, now) => {
      const at = ms(r.lastcontactat) ?? ms(r.enrolledat);
      return at === null ? null : Math.max(0, (now - at) / 1000);
    }));
  metrics.gauge('lms_fleet_box_failures', 'The most failed syncs in a row of any enrolled box, as the boxes said', [],
    worst((r) => Number(r.failures ?? 0)));
  metrics.gauge('lms_fleet_box_clock_skew_seconds',
    "The largest clock skew of any enrolled box (central's time minus the box's, absolute), in seconds", [],
    worst((r) => (r.clockskewms === null || r.clockskewms === undefined ? null
      : Math.abs(Number(r.clockskewms)) / 1000)));
  metrics.gauge('lms_fleet_rows_waiting',
    'Journal entries waiting on the enrolled boxes for central, summed, as each box said at its last contact', [],
    async () => [{ value: (await enrolled()).reduce((n, r) => n + Number(r.rowswaiting ?? 0), 0) }]);
}
