/** An error whose status and message are meant for the client, rendered as the contract's error envelope. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Fields the error body carries besides the envelope's (for example the row errors of a bulk upload). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function httpError(status: number, message: string, headers?: Record<string, string>): HttpError {
  return new HttpError(status, message, headers);
}

/** An error whose body has more than the envelope: `{error, errormessage, data, ...details}`. */
export function httpErrorWith(status: number, message: string, details: Record<string, unknown>): HttpError {
  return new HttpError(status, message, {}, details);
}

export interface ErrorEnvelope {
  error: true;
  errormessage: string;
  data: false;
  logid?: string;
}

export interface SuccessEnvelope<T> {
  error: false;
  data: T;
}

export function ok<T>(data: T): SuccessEnvelope<T> {
  return { error: false, data };
}

export function errorEnvelope(message: string, logid?: string): ErrorEnvelope {
  return logid
    ? { error: true, errormessage: message, data: false, logid }
    : { error: true, errormessage: message, data: false };
}

/**
 * A temporary file that could not be written because the disk is full is the server's problem, not the
 * uploader's: 507, so that a client tries again later instead of giving up on its file.
 */
export function uploadStorageError(err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return httpError(507, 'The server has no room to receive the upload now; please try again later');
  return err;
}
