/**
 * S3's errors: the codes and statuses S3 clients act on, and the one mapping from lading's
 * error codes to them. The XML body is written by `xml.ts`.
 */
import { type ErrorCode, isLadingError } from '../core/errors.ts';

/** The S3 error codes this front answers with, and their statuses. */
export const S3_STATUS = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketAlreadyOwnedByYou: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidPartNumber: 416,
  InvalidRequest: 400,
  InvalidURI: 400,
  KeyTooLongError: 400,
  MalformedXML: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  PreconditionFailed: 412,
  QuotaExceeded: 507,
  RequestTimeTooSkewed: 403,
  RequestTimeout: 400,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  SlowDown: 503,
  XAmzContentSHA256Mismatch: 400,
} as const;

export type S3Code = keyof typeof S3_STATUS;

/** An error answered as S3's XML `<Error>` with `code` and its status. */
export class S3Error extends Error {
  readonly code: S3Code;
  constructor(code: S3Code, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'S3Error';
    this.code = code;
  }

  get status(): number {
    return S3_STATUS[this.code];
  }
}

/** lading's codes as S3's: what an S3 client expects for the same failure. */
const S3_CODE_OF = {
  BAD_REQUEST: 'InvalidRequest',
  INVALID_PATH: 'InvalidArgument',
  IS_A_COLLECTION: 'NoSuchKey',
  NOT_A_COLLECTION: 'InvalidRequest',
  DIGEST_MISMATCH: 'BadDigest',
  INCOMPLETE_BODY: 'IncompleteBody',
  UNAUTHENTICATED: 'AccessDenied',
  INVALID_CREDENTIAL: 'InvalidAccessKeyId',
  FORBIDDEN: 'AccessDenied',
  NOT_FOUND: 'NoSuchKey',
  METHOD_NOT_ALLOWED: 'MethodNotAllowed',
  CONFLICT: 'InvalidRequest',
  PRECONDITION_FAILED: 'PreconditionFailed',
  PAYLOAD_TOO_LARGE: 'EntityTooLarge',
  UNSUPPORTED_MEDIA_TYPE: 'InvalidRequest',
  RANGE_NOT_SATISFIABLE: 'InvalidRange',
  TOO_MANY_REQUESTS: 'SlowDown',
  PROXY_EXPIRED: 'AccessDenied',
  STORAGE_FULL: 'ServiceUnavailable',
  UNAVAILABLE: 'ServiceUnavailable',
  INTERNAL: 'InternalError',
  REQUEST_TIMEOUT: 'RequestTimeout',
  URI_TOO_LONG: 'KeyTooLongError',
  HEADERS_TOO_LARGE: 'InvalidRequest',
  NOT_IMPLEMENTED: 'NotImplemented',
  HTTP_VERSION_NOT_SUPPORTED: 'InvalidRequest',
  GONE: 'NoSuchKey',
  CHECKSUM_MISMATCH: 'BadDigest',
  // NOTE: S3 has no locks: a change a WebDAV lock refuses is refused as one without access is.
  LOCKED: 'AccessDenied',
  // NOTE: the store's failure, not the client's: S3 clients report InternalError and do not take the object for absent.
  OBJECT_DAMAGED: 'InternalError',
  // NOTE: S3 has no quota error of its own; MinIO and Ceph RGW answer `QuotaExceeded`, and a
  // 507 (not a 403) tells a client that retrying after freeing space can succeed.
  QUOTA_EXCEEDED: 'QuotaExceeded',
} as const satisfies Record<ErrorCode, S3Code>;

/** Any failure as an `S3Error`: lading's by the table, anything else as `InternalError` (its message not shown). */
export function toS3Error(err: unknown): S3Error {
  if (err instanceof S3Error) return err;
  if (isLadingError(err)) {
    // NOTE: the core names S3's own code where its error is finer than lading's (multipart).
    const named = err.details.s3;
    if (typeof named === 'string' && named in S3_STATUS) return new S3Error(named as S3Code, err.message, { cause: err });
    if (err.code === 'NOT_FOUND' && err.details.upload === true) return new S3Error('NoSuchUpload', err.message, { cause: err });
    return new S3Error(S3_CODE_OF[err.code], err.message, { cause: err });
  }
  return new S3Error('InternalError', 'We encountered an internal error. Please try again.', { cause: err });
}
