/**
 * Preloaded into a process (`node --require …/clock-shift.js`) to give it a wrong clock, as a Raspberry Pi
 * without a real-time clock has: `LMS_CLOCK_SHIFT_MS` (negative: behind) is added to every time the process
 * reads from JavaScript (`Date.now()`, `new Date()`). What the process reads otherwise (SQLite's
 * CURRENT_TIMESTAMP, file times, timers, which count elapsed time) keeps the machine's clock.
 */
const shift = Number(process.env.LMS_CLOCK_SHIFT_MS ?? 0);

if (Number.isFinite(shift) && shift !== 0) {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + shift);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return RealDate.now() + shift;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}
