/**
 * The one error type of the client commands: a message to show the user as one line
 * (`lading: <message>`) and the exit code to leave with. Never carries a secret in its message.
 */
import { EXIT } from './exit-codes.ts';

/** Statuses worth retrying after a pause: the server is busy or briefly away. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** A failure to show the user as one line (`lading: <message>`), with the exit code to use. */
export class ClientError extends Error {
  readonly exitCode: number;
  /** The HTTP status of the answer that failed, when there was one. */
  readonly status?: number;
  /** Seconds the server asked to wait before trying again (Retry-After). */
  readonly retryAfter?: number;
  /** True for 429, 502–504 and connection resets/timeouts: worth retrying with backoff. */
  readonly retryable: boolean;
  /**
   * True when no other file of the run can fare better (a full local disk, a refused token):
   * the run stops at once instead of failing file after file.
   */
  readonly fatal: boolean;

  constructor(message: string, exitCode: number, extra: { status?: number; retryAfter?: number; cause?: unknown; retryable?: boolean; fatal?: boolean } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ClientError';
    this.exitCode = exitCode;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.retryAfter !== undefined) this.retryAfter = extra.retryAfter;
    this.retryable = extra.retryable ?? (extra.status !== undefined && RETRYABLE_STATUSES.has(extra.status));
    this.fatal = extra.fatal ?? false;
  }
}

/** Local failures that no retry mends, with what they mean. */
const LOCAL_FAILURES: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENAMETOOLONG: 'file name too long',
};

/**
 * A local file-system failure that no retry can mend (a full disk, a read-only or unwritable
 * destination) as a fatal `ClientError` naming `path`, or null for any other failure.
 */
export function localFailure(err: unknown, path: string): ClientError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !(code in LOCAL_FAILURES)) return null;
  return new ClientError(`${path}: ${LOCAL_FAILURES[code]} (${code})`, EXIT.FAILED, { cause: err, fatal: true });
}

/** A usage mistake (bad option value, missing argument): exit 2. */
export function usageError(message: string): ClientError {
  return new ClientError(message, EXIT.USAGE);
}

/** The reason a run aborts the transfers in flight when one of them failed fatally (not Ctrl-C). */
export class RunStopped extends Error {
  constructor() {
    super('stopped: another transfer failed in a way no other can avoid');
    this.name = 'RunStopped';
  }
}

/**
 * `text` with its control characters escaped (a newline as \\n, others as \\xNN), so that a
 * message stays one line whatever name it quotes.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}
