/** A failure `npm run sync-content` reports as one line, without a stack: the address, the answer, what to check. */
export class SyncContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncContentError';
  }
}

export type Log = (line: string) => void;

export const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(2)} MB`;
