/**
 * The one error model of lading: every failure the core, a driver or the HTTP layer reports is a
 * `LadingError` with a stable `code`. This module knows nothing of HTTP; `http/errors.ts` maps
 * codes to statuses once. Codes are only ever added, never renamed or removed.
 */

export const ERROR_CODES = [
  'BAD_REQUEST',
  'INVALID_PATH',
  'IS_A_COLLECTION',
  'NOT_A_COLLECTION',
  'DIGEST_MISMATCH',
  'INCOMPLETE_BODY',
  'UNAUTHENTICATED',
  'INVALID_CREDENTIAL',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RANGE_NOT_SATISFIABLE',
  'TOO_MANY_REQUESTS',
  'PROXY_EXPIRED',
  'STORAGE_FULL',
  'UNAVAILABLE',
  'INTERNAL',
  'REQUEST_TIMEOUT',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'NOT_IMPLEMENTED',
  'HTTP_VERSION_NOT_SUPPORTED',
  'GONE',
  'CHECKSUM_MISMATCH',
  'LOCKED',
  'OBJECT_DAMAGED',
  'QUOTA_EXCEEDED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface LadingErrorOptions {
  cause?: unknown;
  /**
   * Extra facts for the layer that turns the error into a response (e.g. the object's `size`
   * for `RANGE_NOT_SATISFIABLE`), never shown to the client verbatim.
   */
  details?: Record<string, unknown>;
}

/**
 * An error with a stable machine-readable `code` and a message that is safe to show to the
 * client: it never contains a secret, a token or a server-side file system path.
 */
export class LadingError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: LadingErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LadingError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

export function isLadingError(err: unknown, code?: ErrorCode): err is LadingError {
  return err instanceof LadingError && (code === undefined || err.code === code);
}
