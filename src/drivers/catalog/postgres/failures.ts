/**
 * Which failures of PostgreSQL mean that the catalog cannot be reached right now (the server
 * stopped, restarting, refusing connections, or the connection to it lost), and the one
 * `UNAVAILABLE` error they become, so that every caller — a request at any point, or a
 * background loop — sees a dependency that is down, not an internal error. It does not import
 * `pg` and decides nothing else about errors.
 */
import { LadingError, isLadingError } from '../../../core/errors.ts';

/** `errno` codes of a socket that could not connect to PostgreSQL or lost its connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that ends or refuses sessions: `admin_shutdown` (a stop, or a
 * terminated backend), `crash_shutdown`, `cannot_connect_now` (starting up, shutting down,
 * in recovery), `idle_session_timeout`, and `too_many_connections`. Class `08` (connection
 * exception) is matched as a whole.
 */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '57P05', '53300']);

/**
 * The messages `pg` gives, without a code, when a connection ends under it, cannot be made
 * in time, or is used after it broke.
 */
const PG_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * Whether `err` says that PostgreSQL cannot be reached or dropped the connection, rather than
 * that it refused a statement: a socket error (refused, reset, unreachable, name not
 * resolved), a SQLSTATE of class `08` or in `SERVER_STATES`, `pg`'s own "Connection
 * terminated…" and "not queryable" errors, or an error whose `cause` (or, for an
 * `AggregateError`, every one of whose `errors`) is one of these.
 */
export function isConnectionFailure(err: unknown, depth = 0): boolean {
  if (depth > 4 || typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (SOCKET_CODES.has(e.code)) return true;
    // NOTE: a Unix socket's file is gone while the server is stopped.
    if (e.code === 'ENOENT' && e.syscall === 'connect') return true;
    if (/^[0-9A-Z]{5}$/.test(e.code) && (e.code.startsWith('08') || SERVER_STATES.has(e.code))) return true;
  }
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => isConnectionFailure(x, depth + 1))) return true;
  return e.cause !== undefined && isConnectionFailure(e.cause, depth + 1);
}

/**
 * `err` as the catalog reports it: a connection failure becomes `UNAVAILABLE` (with `err` as
 * its cause, and `details.maybeCommitted` when the connection was lost while a transaction
 * committed, so the change may have been made); anything else is returned as it is.
 */
export function catalogError(err: unknown, options: { maybeCommitted?: boolean } = {}): unknown {
  if (isLadingError(err) || !isConnectionFailure(err)) return err;
  return new LadingError('UNAVAILABLE', 'The catalog (PostgreSQL) cannot be reached right now; retry later.', {
    cause: err, details: options.maybeCommitted ? { maybeCommitted: true } : {},
  });
}
