/**
 * Why a ZIP (or a document inside it) was refused. Every reason is the uploader's fault, so a route
 * answers with a 4xx: `status` is 413 when a size limit was hit and 400 otherwise.
 */
export type ZipErrorCode =
  | 'corrupt'
  | 'empty'
  | 'too_many_entries'
  | 'entry_too_large'
  | 'total_too_large'
  | 'ratio'
  | 'bad_name'
  | 'encrypted'
  | 'bad_document';

export class ZipError extends Error {
  readonly status: number;
  constructor(
    readonly code: ZipErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ZipError';
    this.status = code === 'entry_too_large' || code === 'total_too_large' ? 413 : 400;
  }
}

export const isZipError = (e: unknown): e is ZipError => e instanceof ZipError;
