import type { Request } from 'express';
import { httpError } from '@lms/shared';
import type { Config } from '../../config';
import { once, turnsOf } from '../../http/turns';

/** How long a fully received upload waits for a free import slot before it is answered 429. */
export const SLOT_WAIT_MS = 60_000;
const RETRY_AFTER_SECONDS = 30;

const busy = (message: string, seconds = RETRY_AFTER_SECONDS) =>
  httpError(429, message, { 'Retry-After': String(seconds) });

/**
 * Who may import logs now. Two rules make the slots fair:
 * - one import per school account at a time, from the moment its upload starts (`takeAccountTurn`, shared
 *   by the instances through Redis when configured): a second upload of the same account (a device
 *   retrying, or trickling several files) is answered 429 at once;
 * - the `size` import slots of an instance (each a reader thread and a write transaction) are taken only
 *   once an upload has been received in full, so a client that sends slowly or nothing holds no slot, only
 *   its own account's turn, and is cut off by the upload's idle timeout. Uploads that arrive while every
 *   slot is busy wait their turn, in arrival order, for at most `waitMs`, then get 429.
 */
export async function takeAccountTurn(req: Request, schooluserid: string): Promise<() => void> {
  const turns = turnsOf(req, 'log-imports', () => 1);
  const end = await turns.take(schooluserid);
  if (end) return end;
  // Retry-After is when the turn lapses unless renewed: at once after an instance that held it died.
  const seconds = Math.max(1, Math.ceil((await turns.lapsesIn(schooluserid)) / 1000));
  throw busy('A log import of this account is already in progress, please try again later.', seconds);
}

/** The import slots of one instance. */
export class ImportSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly size: number,
    private readonly waitMs = SLOT_WAIT_MS,
  ) {}

  /** One of the import slots, once one is free; the returned function gives it back. */
  slot(): Promise<() => void> {
    const take = () => {
      this.running += 1;
      return once(() => {
        this.running -= 1;
        this.waiting.shift()?.();
      });
    };
    if (this.running < this.size && !this.waiting.length) return Promise.resolve(take());
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(take());
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(busy('Too many log imports in progress, please try again later.'));
      }, this.waitMs);
      this.waiting.push(grant);
    });
  }

  /** For tests and metrics: imports running, uploads waiting for a slot. */
  get state(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

const perConfig = new WeakMap<Config, ImportSlots>();

/** The instance's slots for this configuration (one app, one set). */
export function importSlotsOf(config: Config): ImportSlots {
  let s = perConfig.get(config);
  if (!s) perConfig.set(config, (s = new ImportSlots(config.maxConcurrentImports)));
  return s;
}
