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

  constructor(message: string, exitCode: number, extra: { status?: number; retryAfter?: number; cause?: unknown; retryable?: boolean } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ClientError';
    this.exitCode = exitCode;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.retryAfter !== undefined) this.retryAfter = extra.retryAfter;
    this.retryable = extra.retryable ?? (extra.status !== undefined && RETRYABLE_STATUSES.has(extra.status));
  }
}

/** A usage mistake (bad option value, missing argument): exit 2. */
export function usageError(message: string): ClientError {
  return new ClientError(message, EXIT.USAGE);
}
