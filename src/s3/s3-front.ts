/**
 * The S3 front: an HTTP request handler that speaks S3's REST protocol (path-style and, below
 * `s3.domain`, virtual-hosted-style addressing, SigV4, S3's XML and errors) over the core's services — the backend's reads, commits and
 * copies, the trash, metadata (AVUs) and the S3 keys. It decides no permission (the core does)
 * and stores nothing itself. Operations it does not serve answer `NotImplemented`.
 */
import { randomBytes, createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Readable, Transform, pipeline } from 'node:stream';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import type { Actor, Backend } from '../core/backend.ts';
import { isLadingError } from '../core/errors.ts';
import { type Metadata, isReservedAttribute } from '../core/metadata.ts';
import { MAX_PARTS, type MultipartUploads } from '../core/multipart.ts';
import { type Path, baseName, parentOf } from '../core/path.ts';
import type { ByteRange, Clock } from '../core/ports.ts';
import type { S3Keys } from '../core/s3-keys.ts';
import type { Trash } from '../core/trash.ts';
import type { Avu, DataObject, Entity } from '../core/types.ts';
import { S3Error, toS3Error } from './s3-errors.ts';
import { EMPTY_MD5, compareKeys, etagOf, justBefore, keyOf, keyTarget } from './s3-objects.ts';
import {
  ChunkedDecoder, STREAMING_PAYLOAD, STREAMING_UNSIGNED_TRAILER, UNSIGNED_PAYLOAD, type SignedRequest,
  awsDecode, awsEncode, checkTime, parseSignature, verifySignature,
} from './sigv4.ts';
import { MAX_XML_BYTES, childText, childrenNamed, document, el, escapeXml, parseXml, wrap } from './xml.ts';

export interface S3FrontOptions {
  backend: Backend;
  trash: Pick<Trash, 'trash'>;
  metadata: Pick<Metadata, 'list' | 'add' | 'remove'>;
  keys: Pick<S3Keys, 'resolve'>;
  multipart: MultipartUploads;
  clock: Clock;
  /** The region clients sign for and GetBucketLocation names. */
  region: string;
  /**
   * The base domain of virtual-hosted-style requests (`s3.domain`): a Host below it names the
   * bucket (`alice.s3.example.org`) and the whole path is the key. Null: path-style only.
   */
  domain?: string | null;
  /** Buckets bound to collections by the operator (`s3.buckets`), by name; they win over homes of the same name. */
  buckets?: ReadonlyMap<string, Path>;
  /** Where failures the client cannot act on are logged. */
  log: { error(fields: Record<string, unknown>, message: string): void };
}

/** What one authenticated request carries through the operations. */
interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  actor: Actor;
  claim: SignedRequest;
  signing: { key: Buffer; signature: string };
  query: URLSearchParams;
  bucket: string;
  key: string;
}

/** Most keys one listing page or one DeleteObjects holds (S3's bound). */
const MAX_KEYS = 1000;

/** Sub-resources of a bucket or an object this front does not serve (answered `NotImplemented`). */
const UNSERVED = [
  'acl', 'policy', 'policyStatus', 'cors', 'lifecycle', 'versioning', 'versions', 'tagging', 'website', 'logging', 'notification',
  'replication', 'encryption', 'object-lock', 'retention', 'legal-hold', 'requestPayment', 'accelerate', 'analytics', 'inventory',
  'metrics', 'intelligent-tiering', 'ownershipControls', 'publicAccessBlock', 'restore', 'select', 'torrent', 'attributes',
];

/** The request handler of the S3 listener. */
export function createS3Handler(o: S3FrontOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('Server', 'lading');
    handle(o, req, res).catch((err: unknown) => {
      const error = toS3Error(isLadingError(err, 'INCOMPLETE_BODY') && err.cause instanceof S3Error ? err.cause : err);
      if (error.code === 'InternalError') o.log.error({ err, method: req.method, url: req.url?.split('?')[0] }, 'S3 request failed');
      sendError(req, res, error, requestId);
    });
  };
}

function sendError(req: IncomingMessage, res: ServerResponse, error: S3Error, requestId: string): void {
  if (res.headersSent) {
    res.destroy(error);
    return;
  }
  const body = req.method === 'HEAD' ? '' : document('Error', el('Code', error.code) + el('Message', error.message) + el('Resource', req.url?.split('?')[0] ?? '') + el('RequestId', requestId))
    .replace(` xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`, '');
  res.writeHead(error.status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  // NOTE: a refused upload's body is not read; the connection cannot be reused for the next
  // request, so it is closed once the answer is out.
  if (!req.complete) req.on('error', () => {}).resume();
}

function sendXml(res: ServerResponse, status: number, xml: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml), ...headers });
  res.end(xml);
}

async function handle(o: S3FrontOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  if (!rawPath.startsWith('/')) throw new S3Error('InvalidURI', 'The request URI must be a path.');
  const query = new URLSearchParams(rawQuery.replace(/\+/g, '%2B'));
  const claim = parseSignature(req.headers, query);
  if (!claim) throw new S3Error('AccessDenied', 'Anonymous access is not served; sign the request with an S3 key of lading (lading s3 key create).');
  checkTime(claim, o.clock.now().getTime());
  const { actor, secret } = await o.keys.resolve(claim.keyId, { door: 's3', address: req.socket.remoteAddress ?? null }).catch((err: unknown) => {
    if (isLadingError(err, 'INVALID_CREDENTIAL')) throw new S3Error('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records (or was revoked, or its user is disabled).');
    throw err;
  });
  const signing = verifySignature(claim, secret, { method: req.method ?? 'GET', rawPath, rawQuery, headers: req.headers });
  if (claim.region !== o.region) throw new S3Error('AuthorizationHeaderMalformed', `The region '${claim.region}' is wrong; expecting '${o.region}'.`);
  const hosted = hostedBucket(o.domain ?? null, req.headers.host);
  let bucket: string;
  let key: string;
  if (hosted !== null) {
    bucket = hosted;
    key = awsDecode(rawPath.slice(1));
  } else {
    const slash = rawPath.indexOf('/', 1);
    bucket = awsDecode(slash < 0 ? rawPath.slice(1) : rawPath.slice(1, slash));
    key = slash < 0 ? '' : awsDecode(rawPath.slice(slash + 1));
  }
  const call: Call = { req, res, actor, claim, signing, query, bucket, key };
  const method = req.method;
  const unserved = UNSERVED.find((name) => query.has(name));
  if (bucket === '') {
    if (method === 'GET') return listBuckets(o, call);
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
  if (key === '') {
    if (unserved) throw new S3Error('NotImplemented', `The bucket operation '?${unserved}' is not implemented by lading.`);
    if (method === 'HEAD') return headBucket(o, call);
    if (method === 'GET' && query.has('location')) return getLocation(o, call);
    if (method === 'GET' && query.has('uploads')) return listUploads(o, call);
    if (method === 'GET') return listObjects(o, call);
    if (method === 'POST' && query.has('delete')) return deleteObjects(o, call);
    if (method === 'PUT' && rawQuery === '') return createBucket(o, call);
    throw new S3Error('NotImplemented', `${method} on a bucket is not implemented by lading.`);
  }
  if (unserved) throw new S3Error('NotImplemented', `The object operation '?${unserved}' is not implemented by lading.`);
  if (method === 'POST' && query.has('uploads')) return createUpload(o, call);
  if (query.has('uploadId')) {
    if (method === 'PUT' && req.headers['x-amz-copy-source'] !== undefined) return uploadPartCopy(o, call);
    if (method === 'PUT') return uploadPart(o, call);
    if (method === 'POST') return completeUpload(o, call);
    if (method === 'DELETE') return abortUpload(o, call);
    if (method === 'GET') return listParts(o, call);
  }
  if (method === 'GET' || method === 'HEAD') return getObject(o, call);
  if (method === 'PUT' && req.headers['x-amz-copy-source'] !== undefined) return copyObject(o, call);
  if (method === 'PUT') return putObject(o, call);
  if (method === 'DELETE') return deleteObject(o, call);
  throw new S3Error('NotImplemented', `${method} on an object is not implemented by lading.`);
}

/**
 * The bucket a virtual-hosted-style request names in its Host (`alice.s3.example.org` below the
 * domain `s3.example.org`: `alice`); null for a Host that is the domain itself, another name or
 * an address (a path-style request). The port and letter case of the Host do not matter.
 */
export function hostedBucket(domain: string | null, host: string | undefined): string | null {
  if (domain === null || host === undefined) return null;
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (name.startsWith('[') || !name.endsWith(`.${domain}`)) return null;
  const bucket = name.slice(0, -domain.length - 1);
  return bucket === '' ? null : bucket;
}

/** The collection of a bucket: the one `s3.buckets` binds it to, else the home of the user it is named after. `NoSuchBucket`. */
function bucketPath(o: S3FrontOptions, bucket: string): Path {
  const mapped = o.buckets?.get(bucket);
  if (mapped !== undefined) return mapped;
  try {
    return o.backend.homeOf(bucket);
  } catch {
    throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.');
  }
}

/** Stats the bucket: `NoSuchBucket` when its collection does not exist, `AccessDenied` when the caller may not read it. */
async function statBucket(o: S3FrontOptions, call: Call): Promise<{ path: Path; entity: Entity }> {
  const path = bucketPath(o, call.bucket);
  try {
    return { path, entity: await o.backend.statAs(call.actor, path) };
  } catch (err) {
    if (isLadingError(err, 'NOT_FOUND')) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist.');
    throw err;
  }
}

const iso = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, '.000Z');

async function listBuckets(o: S3FrontOptions, call: Call): Promise<void> {
  // NOTE: the buckets a caller may read are their own home and the buckets of s3.buckets whose
  // collection they may read; other homes shared with them are reached by name (ListBuckets
  // lists no collection it would have to find by scanning).
  const candidates = new Map<string, Path>();
  if (!o.buckets?.has(call.actor.user)) candidates.set(call.actor.user, o.backend.homeOf(call.actor.user));
  for (const [name, path] of o.buckets ?? []) candidates.set(name, path);
  const listed: { name: string; created: Date }[] = [];
  for (const [name, path] of candidates) {
    try {
      listed.push({ name, created: (await o.backend.statAs(call.actor, path)).createdAt });
    } catch (err) {
      if (!isLadingError(err, 'NOT_FOUND') && !isLadingError(err, 'FORBIDDEN')) throw err;
    }
  }
  listed.sort((a, b) => compareKeys(a.name, b.name));
  const owner = wrap('Owner', el('ID', call.actor.user) + el('DisplayName', call.actor.user));
  const buckets = wrap('Buckets', listed.map((b) => wrap('Bucket', el('Name', b.name) + el('CreationDate', iso(b.created)))).join(''));
  sendXml(call.res, 200, document('ListAllMyBucketsResult', owner + buckets));
}

async function headBucket(o: S3FrontOptions, call: Call): Promise<void> {
  await statBucket(o, call);
  call.res.writeHead(200, { 'x-amz-bucket-region': o.region, 'Content-Length': 0 });
  call.res.end();
}

async function getLocation(o: S3FrontOptions, call: Call): Promise<void> {
  await statBucket(o, call);
  sendXml(call.res, 200, document('LocationConstraint', o.region === 'us-east-1' ? '' : escapeXml(o.region)));
}

async function createBucket(o: S3FrontOptions, call: Call): Promise<void> {
  // NOTE: buckets are homes, made with their users: "creating" one's own (which tools such
  // as rclone do before a copy) succeeds, as it does in us-east-1 for a bucket one owns.
  const { path } = await statBucket(o, call);
  await o.backend.require(call.actor, path, 'write').catch(() => {
    throw new S3Error('AccessDenied', 'Buckets are the homes of lading\'s users; this one is not yours to write.');
  });
  await drain(call.req);
  call.res.writeHead(200, { Location: `/${call.bucket}`, 'Content-Length': 0 });
  call.res.end();
}

/** One listing page: objects and common prefixes in key order, and where the next page starts. */
interface Page {
  contents: { key: string; object: DataObject }[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix of the page, when truncated. */
  next: string | null;
}

/** The max-keys of a listing: 1,000 at most (S3's bound), 1,000 by default. */
function maxKeysOf(query: URLSearchParams): number {
  const given = query.get('max-keys');
  if (given === null || given === '') return MAX_KEYS;
  if (!/^\d{1,10}$/.test(given)) throw new S3Error('InvalidArgument', 'max-keys must be a whole number.');
  return Math.min(Number(given), MAX_KEYS);
}

/**
 * A page of the keys of the bucket at `bucket` that start with `prefix` and sort after `after`.
 * With `/` as delimiter, a collection's children are read (the collections as common
 * prefixes); without one, every data object below the prefix's collection, in path order.
 * Reads the catalog a page at a time, stopping after `max` entries and one more (to know
 * whether the page is truncated).
 */
async function listPage(o: S3FrontOptions, actor: Actor, bucket: Path, prefix: string, delimiter: string, after: string, max: number): Promise<Page> {
  const page: Page = { contents: [], prefixes: [], truncated: false, next: null };
  const cut = prefix.lastIndexOf('/') + 1;
  const dirKey = prefix.slice(0, cut);
  let dir: Path;
  try {
    dir = dirKey === '' ? bucket : keyTarget(bucket, dirKey).path;
  } catch {
    return page;
  }
  const lower = [after, justBefore(prefix)].filter((s): s is string => s !== null && s !== '').sort(compareKeys).at(-1) ?? null;
  let count = 0;
  const take = (key: string, object: DataObject | null): boolean => {
    if (lower !== null && compareKeys(key, lower) <= 0) return true;
    if (count === max) {
      page.truncated = count > 0;
      return false;
    }
    if (object) page.contents.push({ key, object });
    else page.prefixes.push(key);
    page.next = key;
    count++;
    return true;
  };
  const gone = (err: unknown) => isLadingError(err, 'NOT_FOUND') || isLadingError(err, 'NOT_A_COLLECTION');
  if (delimiter === '/') {
    const namePrefix = prefix.slice(cut);
    let afterName: string | null = null;
    if (lower !== null && lower.startsWith(dirKey)) afterName = lower.slice(dirKey.length).split('/')[0]!;
    else if (lower !== null && compareKeys(lower, dirKey) > 0) return page;
    let listing;
    try {
      listing = await o.backend.listingAs(actor, dir, afterName === '' ? null : afterName);
    } catch (err) {
      if (gone(err)) return page;
      throw err;
    }
    for await (const entity of listing.entries) {
      if (!entity.name.startsWith(namePrefix)) {
        if (compareKeys(entity.name, namePrefix) > 0) break;
        continue;
      }
      const key = dirKey + entity.name + (entity.kind === 'collection' ? '/' : '');
      if (!take(key, entity.kind === 'dataobject' ? entity : null)) break;
    }
  } else if (delimiter === '') {
    let walk;
    try {
      walk = await o.backend.walkAs(actor, dir);
    } catch (err) {
      if (gone(err)) return page;
      throw err;
    }
    const from = lower === null ? undefined : `${bucket}/${lower.replace(/\/$/, '')}`;
    for await (const entity of walk.entries(from)) {
      if (entity.kind !== 'dataobject') continue;
      const key = keyOf(bucket, entity.path, false);
      if (!key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      if (!take(key, entity)) break;
    }
  } else {
    // NOTE: another delimiter than '/' does not follow collections: every data object below
    // the prefix's collection is read, and the keys are grouped at the delimiter.
    let walk;
    try {
      walk = await o.backend.walkAs(actor, dir);
    } catch (err) {
      if (gone(err)) return page;
      throw err;
    }
    let group: string | null = null;
    for await (const entity of walk.entries(lower === null ? undefined : `${bucket}/${lower.replace(/\/$/, '')}`)) {
      if (entity.kind !== 'dataobject') continue;
      const key = keyOf(bucket, entity.path, false);
      if (!key.startsWith(prefix)) {
        if (compareKeys(key, prefix) > 0) break;
        continue;
      }
      const at = key.indexOf(delimiter, prefix.length);
      if (at < 0) {
        if (!take(key, entity)) break;
        continue;
      }
      const common = key.slice(0, at + delimiter.length);
      if (common === group) continue;
      group = common;
      if (!take(common, null)) break;
    }
  }
  if (!page.truncated) page.next = null;
  return page;
}

async function listObjects(o: S3FrontOptions, call: Call): Promise<void> {
  const { query } = call;
  const { path: bucket } = await statBucket(o, call);
  const v2 = query.get('list-type') === '2';
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const max = maxKeysOf(query);
  const encoding = query.get('encoding-type');
  if (encoding !== null && encoding !== 'url') throw new S3Error('InvalidArgument', 'encoding-type must be url.');
  const enc = (text: string): string => (encoding === 'url' ? awsEncode(text, true) : text);
  let after = '';
  const token = query.get('continuation-token');
  if (v2 && token !== null) {
    after = /^[A-Za-z0-9_-]*$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
    if (!after) throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect.');
  } else if (v2) {
    after = query.get('start-after') ?? '';
  } else {
    after = query.get('marker') ?? '';
  }
  const page = await listPage(o, call.actor, bucket, prefix, delimiter, after, max);
  let xml = el('Name', call.bucket) + el('Prefix', enc(prefix)) + (delimiter ? el('Delimiter', enc(delimiter)) : '') + el('MaxKeys', max)
    + (encoding ? el('EncodingType', encoding) : '') + el('IsTruncated', page.truncated);
  if (v2) {
    xml += el('KeyCount', page.contents.length + page.prefixes.length)
      + (token !== null ? el('ContinuationToken', token) : '')
      + (query.has('start-after') ? el('StartAfter', enc(query.get('start-after')!)) : '')
      + (page.next !== null ? el('NextContinuationToken', Buffer.from(page.next, 'utf8').toString('base64url')) : '');
  } else {
    xml += el('Marker', enc(after)) + (page.next !== null ? el('NextMarker', enc(page.next)) : '');
  }
  for (const { key, object } of page.contents) {
    xml += wrap('Contents', el('Key', enc(key)) + el('LastModified', iso(object.modifiedAt)) + el('ETag', etagOf(object)) + el('Size', object.size)
      + (v2 ? '' : wrap('Owner', el('ID', object.owner) + el('DisplayName', object.owner))) + el('StorageClass', 'STANDARD'));
  }
  for (const p of page.prefixes) xml += wrap('CommonPrefixes', el('Prefix', enc(p)));
  sendXml(call.res, 200, document('ListBucketResult', xml));
}

/** A byte range of an object of `size` bytes from a `Range` header; undefined for the whole. `InvalidRange`. */
function rangeOf(header: string | undefined, size: number): ByteRange | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) throw new S3Error('InvalidRange', 'The requested range is not satisfiable.');
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || (m[2] !== '' && Number(m[2]) < start)) throw new S3Error('InvalidRange', 'The requested range is not satisfiable.');
  return { start, end };
}

/** Whether an `If-Match`/`If-None-Match` list holds `etag` (or `*`). */
function matches(list: string, etag: string): boolean {
  return list.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === etag.slice(1, -1) || t === `W/${etag}`;
  });
}

/** S3's conditional GET and HEAD: 412 for a failed If-Match/If-Unmodified-Since, 304 for If-None-Match/If-Modified-Since. */
function conditions(headers: IncomingMessage['headers'], object: DataObject): 304 | 412 | null {
  const etag = etagOf(object);
  const modified = Math.floor(object.modifiedAt.getTime() / 1000) * 1000;
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  const since = (name: string): number | null => {
    const v = headers[name];
    const t = typeof v === 'string' ? Date.parse(v) : NaN;
    return Number.isNaN(t) ? null : t;
  };
  if (ifMatch !== undefined) {
    if (!matches(ifMatch, etag)) return 412;
  } else {
    const unmodified = since('if-unmodified-since');
    if (unmodified !== null && modified > unmodified) return 412;
  }
  if (ifNoneMatch !== undefined) {
    if (matches(ifNoneMatch, etag)) return 304;
  } else {
    const modifiedSince = since('if-modified-since');
    if (modifiedSince !== null && modified <= modifiedSince) return 304;
  }
  return null;
}

/** The headers that describe an object: size aside, its ETag, dates, user metadata and PID. */
function objectHeaders(object: DataObject, avus: readonly Avu[]): Record<string, string> {
  const headers: Record<string, string> = {
    ETag: etagOf(object), 'Last-Modified': object.modifiedAt.toUTCString(), 'Accept-Ranges': 'bytes', 'Content-Type': 'binary/octet-stream',
  };
  for (const avu of avus) {
    const header = DESCRIBING.get(avu.attribute);
    if (header !== undefined && !/[\r\n]/.test(avu.value)) headers[header] = headerValue(avu.value);
  }
  for (const avu of avus) {
    const name = avu.attribute.toLowerCase();
    if (/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name) && !/[\r\n]/.test(avu.value) && name !== 'pid') headers[`x-amz-meta-${name}`] = headerValue(avu.value);
  }
  // NOTE: as user metadata, so that every S3 client shows it (aws s3api head-object's
  // Metadata, boto3's head_object()['Metadata']); a PUT never sets it.
  if (object.pid !== null) headers['x-amz-meta-pid'] = object.pid;
  return headers;
}

/** A header value as S3 sends user metadata that is not ASCII: RFC 2047 encoded. */
function headerValue(value: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

async function getObject(o: S3FrontOptions, call: Call): Promise<void> {
  const { req, res } = call;
  const { path, folder } = keyTarget(bucketPath(o, call.bucket), call.key);
  if (folder) {
    const entity = await o.backend.statAs(call.actor, path);
    if (entity.kind !== 'collection') throw new S3Error('NoSuchKey', 'The specified key does not exist.');
    res.writeHead(200, { ETag: `"${EMPTY_MD5}"`, 'Last-Modified': entity.modifiedAt.toUTCString(), 'Content-Length': 0, 'Content-Type': 'application/x-directory' });
    res.end();
    return;
  }
  let outcome: 304 | 412 | null = null;
  let range: ByteRange | undefined;
  const head = req.method === 'HEAD';
  const partParam = call.query.get('partNumber');
  if (partParam !== null && !/^\d{1,5}$/.test(partParam)) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  const partNumber = partParam === null ? null : Number(partParam);
  if (partNumber !== null && (partNumber < 1 || partNumber > MAX_PARTS)) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  if (partNumber !== null && req.headers.range !== undefined) throw new S3Error('InvalidRequest', 'Cannot specify both Range header and partNumber query parameter.');
  // NOTE: a part is found from the AVUs, read before the object is opened (only for partNumber).
  let avus: Avu[] | null = partNumber === null ? null : await o.metadata.list(call.actor, path);
  let parts: number | null = null;
  const opened = await o.backend.openObjectAs(call.actor, path, (object) => {
    outcome = conditions(req.headers, object);
    if (partNumber !== null) {
      const part = partRange(avus!, object, partNumber);
      parts = part.count;
      range = part.range;
    }
    if (outcome !== null || head) return { skipBody: true };
    if (partNumber === null) range = rangeOf(typeof req.headers.range === 'string' ? req.headers.range : undefined, object.size);
    return range ? { range } : {};
  });
  const { object, stream } = opened;
  if (outcome === 412) {
    stream?.destroy();
    throw new S3Error('PreconditionFailed', 'At least one of the preconditions you specified did not hold.');
  }
  avus ??= outcome === 304 ? [] : await o.metadata.list(call.actor, path).catch(() => []);
  const headers = objectHeaders(object, avus);
  if (parts !== null && parts > 1) headers['x-amz-mp-parts-count'] = String(parts);
  // NOTE: a signed request may ask for other headers than the stored ones (S3's response-*).
  for (const [param, header] of RESPONSE_OVERRIDES) {
    const value = call.query.get(param);
    if (value !== null && !/[\r\n]/.test(value)) headers[header] = headerValue(value);
  }
  if (outcome === 304) {
    res.writeHead(304, { ETag: headers.ETag!, 'Last-Modified': headers['Last-Modified']! });
    res.end();
    return;
  }
  if (head) {
    const r = range as ByteRange | undefined;
    if (r) res.writeHead(206, { ...headers, 'Content-Length': r.end - r.start + 1, 'Content-Range': `bytes ${r.start}-${r.end}/${object.size}` });
    else res.writeHead(200, { ...headers, 'Content-Length': object.size });
    res.end();
    return;
  }
  const r = range as ByteRange | undefined;
  if (r) res.writeHead(206, { ...headers, 'Content-Length': r.end - r.start + 1, 'Content-Range': `bytes ${r.start}-${r.end}/${object.size}` });
  else res.writeHead(200, { ...headers, 'Content-Length': object.size });
  if (!stream) {
    res.end();
    return;
  }
  try {
    if (stream.copyTo) await stream.copyTo(res);
    else await pipelineAsync(stream, res, { end: false });
    res.end();
  } catch (err) {
    stream.destroy();
    res.destroy(err as Error);
  }
}

/** Consumes a body nobody needs (so the connection can take the next request). */
async function drain(req: IncomingMessage): Promise<void> {
  if (req.complete) return;
  for await (const chunk of req) void chunk;
}

/**
 * The body of an upload as its bytes: decoded from `aws-chunked` (each chunk's signature
 * checked) for the streaming modes, the request itself otherwise. Trailing checksums of an
 * unsigned streaming body go to `trailers`.
 */
function payloadOf(call: Call, trailers: Map<string, string>): Readable {
  const { req, claim } = call;
  const mode = claim.payload;
  if (mode !== STREAMING_PAYLOAD && mode !== STREAMING_UNSIGNED_TRAILER) {
    if (mode !== UNSIGNED_PAYLOAD && !/^[0-9a-f]{64}$/.test(mode)) throw new S3Error('InvalidArgument', `x-amz-content-sha256 '${mode}' is not a payload hash this server accepts.`);
    return req;
  }
  const decodedHeader = req.headers['x-amz-decoded-content-length'];
  const decoded = typeof decodedHeader === 'string' && /^\d+$/.test(decodedHeader) ? Number(decodedHeader) : null;
  const decoder = new ChunkedDecoder({
    signing: mode === STREAMING_PAYLOAD ? { key: call.signing.key, seed: call.signing.signature, amzDate: claim.amzDate, scope: claim.scope } : null,
    decodedLength: decoded,
    onTrailer: (name, value) => trailers.set(name, value),
  });
  pipeline(req, decoder, () => {});
  return decoder;
}

/** Reads a small body (an XML document) whole, checking its payload hash; `MalformedXML` beyond `MAX_XML_BYTES`. */
async function readSmallBody(call: Call): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payloadOf(call, new Map()) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_XML_BYTES) throw new S3Error('MalformedXML', `The XML body is larger than ${MAX_XML_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);
  checkPayloadHash(call.claim.payload, createHash('sha256').update(body).digest());
  const md5 = call.req.headers['content-md5'];
  if (typeof md5 === 'string' && !createHash('md5').update(body).digest().equals(base64Digest(md5, 16, 'Content-MD5'))) {
    throw new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
  return body;
}

function checkPayloadHash(mode: string, sha256: Buffer): void {
  if (/^[0-9a-f]{64}$/.test(mode) && mode !== sha256.toString('hex')) {
    throw new S3Error('XAmzContentSHA256Mismatch', 'The provided \'x-amz-content-sha256\' header does not match what was computed.');
  }
}

function base64Digest(value: string, length: number, name: string): Buffer {
  const digest = Buffer.from(value, 'base64');
  if (digest.length !== length || !/^[A-Za-z0-9+/]+=*$/.test(value.trim())) throw new S3Error('InvalidDigest', `The ${name} you specified is not valid.`);
  return digest;
}

/** The user metadata of a request (`x-amz-meta-*`) as AVUs; the PID's name is the server's and is skipped. */
function userMetadata(headers: IncomingMessage['headers']): Avu[] {
  const avus: Avu[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('x-amz-meta-') || value === undefined) continue;
    const attribute = name.slice('x-amz-meta-'.length);
    if (attribute === '' || attribute === 'pid') continue;
    avus.push({ attribute, value: Array.isArray(value) ? value.join(',') : value, unit: '' });
  }
  return avus;
}

/** Creates the collections above `path` that are missing (a key `a/b/c` makes `a` and `a/b`). */
async function makeParents(o: S3FrontOptions, actor: Actor, path: Path): Promise<void> {
  await o.backend.createCollectionAs(actor, parentOf(path), { parents: true });
}

async function putObject(o: S3FrontOptions, call: Call): Promise<void> {
  const { req, res } = call;
  const { path, folder } = keyTarget(bucketPath(o, call.bucket), call.key);
  if (folder) {
    const length = Number(req.headers['content-length'] ?? req.headers['x-amz-decoded-content-length'] ?? 0);
    if (length > 0) throw new S3Error('InvalidRequest', 'A key ending in \'/\' names a collection; it takes no bytes.');
    await drain(req);
    await o.backend.createCollectionAs(call.actor, path, { parents: true });
    res.writeHead(200, { ETag: `"${EMPTY_MD5}"`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const md5Header = req.headers['content-md5'];
  const expected: { md5?: Buffer; sha256?: Buffer } = {};
  if (typeof md5Header === 'string') expected.md5 = base64Digest(md5Header, 16, 'Content-MD5');
  const checksums: [string, string][] = Object.entries(req.headers)
    .filter(([name]) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-algorithm' && name !== 'x-amz-checksum-type')
    .map(([name, value]) => [name.slice('x-amz-checksum-'.length), String(value)]);
  const trailers = new Map<string, string>();
  const source = payloadOf(call, trailers);
  const hashers = new Map<string, { update(b: Buffer): void; digest(): Buffer }>();
  const algorithm = (name: string) => {
    if (name === 'sha256') return null;
    if (name === 'sha1') return createHash('sha1');
    if (name === 'crc32') return crc32Hasher();
    throw new S3Error('InvalidRequest', `The checksum algorithm '${name}' is not supported by lading (use sha256, sha1, crc32 or Content-MD5).`);
  };
  const announcedTrailer = String(req.headers['x-amz-trailer'] ?? '').toLowerCase();
  for (const name of [...checksums.map(([n]) => n), ...(announcedTrailer.startsWith('x-amz-checksum-') ? [announcedTrailer.slice('x-amz-checksum-'.length)] : [])]) {
    const hasher = algorithm(name);
    if (hasher) hashers.set(name, hasher);
  }
  let body: Readable = source;
  if (hashers.size > 0) {
    body = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        for (const h of hashers.values()) h.update(chunk);
        cb(null, chunk);
      },
    });
    pipeline(source, body as Transform, () => {});
  }
  const verify = ({ sha256 }: { sha256: Buffer; md5: Buffer | null }): void => {
    checkPayloadHash(call.claim.payload, sha256);
    const announced = [...checksums, ...[...trailers].filter(([n]) => n.startsWith('x-amz-checksum-')).map(([n, v]) => [n.slice('x-amz-checksum-'.length), v] as [string, string])];
    for (const [name, value] of announced) {
      const digest = name === 'sha256' ? sha256 : hashers.get(name)?.digest();
      if (digest && digest.toString('base64') !== value.trim()) throw new S3Error('BadDigest', `The x-amz-checksum-${name} you specified did not match the calculated checksum.`);
    }
  };
  // NOTE: If-None-Match: * is kept by the commit itself (no overwrite), so two writers racing
  // for a new key cannot both succeed; an If-Match (or an If-None-Match with tags) is checked
  // against the object as it is when the request arrives.
  const ifMatch = req.headers['if-match'];
  const ifNoneMatch = req.headers['if-none-match'];
  const createOnly = typeof ifNoneMatch === 'string' && ifNoneMatch.trim() === '*';
  if (ifMatch !== undefined || (ifNoneMatch !== undefined && !createOnly)) {
    let existing: Entity | null = null;
    try {
      existing = await o.backend.statAs(call.actor, path);
    } catch (err) {
      if (!isLadingError(err, 'NOT_FOUND')) throw err;
    }
    const object = existing?.kind === 'dataobject' ? existing : null;
    if (ifMatch !== undefined && !object) throw new S3Error('NoSuchKey', 'The specified key does not exist (If-Match needs an object).');
    if ((ifMatch !== undefined && !matches(ifMatch, etagOf(object!))) || (object && ifNoneMatch !== undefined && matches(ifNoneMatch, etagOf(object)))) {
      throw new S3Error('PreconditionFailed', 'At least one of the preconditions you specified did not hold.');
    }
  }
  const meta = [...userMetadata(req.headers), ...describingMeta(req.headers)];
  // NOTE: an aws-chunked body's Content-Length counts its chunk signatures: only the decoded length is the object's.
  const announced = Number(req.headers['x-amz-decoded-content-length'] ?? (String(req.headers['content-encoding'] ?? '').includes('aws-chunked') ? NaN : req.headers['content-length']));
  const upload = () => o.backend.uploadAs(call.actor, path, body, {
    overwrite: !createOnly, expected, md5: true, meta, replaceMeta: REPLACED, verify, ...(Number.isSafeInteger(announced) ? { declaredSize: announced } : {}),
  });
  let outcome;
  try {
    outcome = await upload();
  } catch (err) {
    if (createOnly && isLadingError(err, 'CONFLICT')) throw new S3Error('PreconditionFailed', 'At least one of the preconditions you specified did not hold (the key exists).');
    if (!isLadingError(err, 'NOT_FOUND')) throw err;
    // NOTE: refused before any byte was read (the parent is checked first): make the parents and go again.
    await makeParents(o, call.actor, path);
    outcome = await upload();
  }
  res.writeHead(200, { ETag: etagOf(outcome.object), 'Content-Length': 0, ...(outcome.object.pid ? { 'x-amz-meta-pid': outcome.object.pid } : {}) });
  res.end();
}

/** CRC-32 (the IEEE polynomial of zlib), big-endian, as S3's `x-amz-checksum-crc32`. */
function crc32Hasher(): { update(b: Buffer): void; digest(): Buffer } {
  let crc = 0;
  return {
    update(b) {
      crc = zlibCrc32(b, crc);
    },
    digest() {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(crc >>> 0);
      return out;
    },
  };
}

async function deleteKey(o: S3FrontOptions, actor: Actor, bucket: Path, key: string): Promise<void> {
  const { path, folder } = keyTarget(bucket, key);
  let entity: Entity;
  try {
    entity = await o.backend.statAs(actor, path);
  } catch (err) {
    // NOTE: S3 answers a delete of a missing key as a success (it is idempotent).
    if (isLadingError(err, 'NOT_FOUND')) return;
    throw err;
  }
  if (folder !== (entity.kind === 'collection')) return;
  if (folder) {
    // NOTE: deleting the marker `dir/` leaves the keys below it in S3; a collection goes to
    // the trash only when it is empty, so that `dir/` never takes its contents along.
    const { entries } = await o.backend.listingAs(actor, path);
    const first = await entries.next();
    await entries.return(undefined);
    if (!first.done) return;
  }
  await o.trash.trash(actor, path, 'deleted through S3');
}

async function deleteObject(o: S3FrontOptions, call: Call): Promise<void> {
  await deleteKey(o, call.actor, bucketPath(o, call.bucket), call.key);
  await drain(call.req);
  call.res.writeHead(204);
  call.res.end();
}

async function deleteObjects(o: S3FrontOptions, call: Call): Promise<void> {
  const { path: bucket } = await statBucket(o, call);
  const root = parseXml((await readSmallBody(call)).toString('utf8'));
  if (root.name !== 'Delete') throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema (root is not Delete).');
  const objects = childrenNamed(root, 'Object');
  if (objects.length > MAX_KEYS) throw new S3Error('MalformedXML', `A DeleteObjects request holds at most ${MAX_KEYS} keys.`);
  const quiet = childText(root, 'Quiet')?.trim() === 'true';
  let xml = '';
  for (const object of objects) {
    const key = childText(object, 'Key');
    if (key === undefined) throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema (an Object without Key).');
    try {
      await deleteKey(o, call.actor, bucket, key);
      if (!quiet) xml += wrap('Deleted', el('Key', key));
    } catch (err) {
      const e = toS3Error(err);
      xml += wrap('Error', el('Key', key) + el('Code', e.code) + el('Message', e.message));
    }
  }
  sendXml(call.res, 200, document('DeleteResult', xml));
}

async function copyObject(o: S3FrontOptions, call: Call): Promise<void> {
  const { req, res } = call;
  const from = copySource(o, call);
  const to = keyTarget(bucketPath(o, call.bucket), call.key);
  if (from.folder || to.folder) throw new S3Error('InvalidRequest', 'Keys ending in \'/\' name collections; CopyObject copies data objects.');
  const directive = String(req.headers['x-amz-metadata-directive'] ?? 'COPY').toUpperCase();
  if (directive !== 'COPY' && directive !== 'REPLACE') throw new S3Error('InvalidArgument', 'x-amz-metadata-directive must be COPY or REPLACE.');
  await drain(req);
  const source = await o.backend.statAs(call.actor, from.path);
  if (source.kind !== 'dataobject') throw new S3Error('InvalidRequest', 'The copy source is a collection.');
  checkCopyConditions(req.headers, source);
  let copied: DataObject;
  if (from.path === to.path) {
    // NOTE: S3 refuses a copy onto itself unless it changes the metadata; the bytes stay.
    if (directive !== 'REPLACE') throw new S3Error('InvalidRequest', 'This copy request is illegal because it is trying to copy an object to itself without changing the object\'s metadata.');
    copied = source;
  } else {
    const place = { into: parentOf(to.path), name: baseName(to.path), overwrite: true };
    let outcome;
    try {
      outcome = await o.backend.copyAs(call.actor, from.path, place);
    } catch (err) {
      if (!isLadingError(err, 'NOT_FOUND')) throw err;
      await makeParents(o, call.actor, to.path);
      outcome = await o.backend.copyAs(call.actor, from.path, place);
    }
    if (outcome.entity.kind !== 'dataobject') throw new S3Error('InvalidRequest', 'The copy source is a collection.');
    copied = outcome.entity;
  }
  if (directive === 'REPLACE') {
    // NOTE: REPLACE sets the user metadata and the describing headers anew: the AVUs the
    // copy carried that S3 names go (the server's, such as the PID, stay), then the request's
    // are added. Not one transaction: a failure midway leaves some of the old ones.
    const fresh = [...userMetadata(req.headers), ...describingMeta(req.headers)];
    for (const avu of await o.metadata.list(call.actor, to.path)) {
      if (isReservedAttribute(avu.attribute) || avu.attribute === PARTS_ATTRIBUTE) continue;
      if (fresh.some((f) => f.attribute === avu.attribute && f.value === avu.value && f.unit === avu.unit)) continue;
      await o.metadata.remove(call.actor, to.path, avu.attribute, avu.value);
    }
    const kept = await o.metadata.list(call.actor, to.path);
    for (const avu of fresh) {
      if (!kept.some((k) => k.attribute === avu.attribute && k.value === avu.value && k.unit === avu.unit)) await o.metadata.add(call.actor, to.path, avu);
    }
  }
  sendXml(res, 200, document('CopyObjectResult', el('LastModified', iso(copied.modifiedAt)) + el('ETag', etagOf(copied))));
}

/** The object path a multipart request names (never a collection's). */
function uploadTarget(o: S3FrontOptions, call: Call): Path {
  const { path, folder } = keyTarget(bucketPath(o, call.bucket), call.key);
  if (folder) throw new S3Error('InvalidRequest', 'A key ending in \'/\' names a collection; it takes no bytes.');
  return path;
}

async function createUpload(o: S3FrontOptions, call: Call): Promise<void> {
  const path = uploadTarget(o, call);
  await drain(call.req);
  const meta = [...userMetadata(call.req.headers), ...describingMeta(call.req.headers)];
  let id: string;
  try {
    id = await o.multipart.create(call.actor, path, meta);
  } catch (err) {
    if (!isLadingError(err, 'NOT_FOUND')) throw err;
    await makeParents(o, call.actor, path);
    id = await o.multipart.create(call.actor, path, meta);
  }
  sendXml(call.res, 200, document('InitiateMultipartUploadResult', el('Bucket', call.bucket) + el('Key', call.key) + el('UploadId', id)));
}

async function uploadPart(o: S3FrontOptions, call: Call): Promise<void> {
  const { req, res, query } = call;
  const path = uploadTarget(o, call);
  const number = Number(query.get('partNumber'));
  if (!/^\d{1,5}$/.test(query.get('partNumber') ?? '')) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  const md5Header = req.headers['content-md5'];
  const expected: { md5?: Buffer } = {};
  if (typeof md5Header === 'string') expected.md5 = base64Digest(md5Header, 16, 'Content-MD5');
  const source = payloadOf(call, new Map());
  const part = await o.multipart.putPart(call.actor, query.get('uploadId')!, path, number, source, {
    expected, verify: ({ sha256 }) => checkPayloadHash(call.claim.payload, sha256),
  });
  res.writeHead(200, { ETag: `"${part.md5}"`, 'Content-Length': 0 });
  res.end();
}

async function abortUpload(o: S3FrontOptions, call: Call): Promise<void> {
  await o.multipart.abort(call.actor, call.query.get('uploadId')!, uploadTarget(o, call));
  await drain(call.req);
  call.res.writeHead(204);
  call.res.end();
}

async function listParts(o: S3FrontOptions, call: Call): Promise<void> {
  const { query } = call;
  const id = query.get('uploadId')!;
  const parts = await o.multipart.listParts(call.actor, id, uploadTarget(o, call));
  const marker = Number(query.get('part-number-marker') ?? 0) || 0;
  const max = Math.min(Number(query.get('max-parts') ?? 1000) || 1000, 1000);
  const after = parts.filter((p) => p.number > marker);
  const page = after.slice(0, max);
  const truncated = after.length > page.length;
  let xml = el('Bucket', call.bucket) + el('Key', call.key) + el('UploadId', id) + el('PartNumberMarker', marker)
    + (truncated ? el('NextPartNumberMarker', page.at(-1)!.number) : '') + el('MaxParts', max) + el('IsTruncated', truncated)
    + wrap('Owner', el('ID', call.actor.user) + el('DisplayName', call.actor.user)) + el('StorageClass', 'STANDARD');
  for (const p of page) xml += wrap('Part', el('PartNumber', p.number) + el('LastModified', iso(p.modifiedAt)) + el('ETag', `"${p.md5}"`) + el('Size', p.size));
  sendXml(call.res, 200, document('ListPartsResult', xml));
}

async function listUploads(o: S3FrontOptions, call: Call): Promise<void> {
  const { path: bucket } = await statBucket(o, call);
  const prefix = call.query.get('prefix') ?? '';
  const uploads = (await o.multipart.list(call.actor))
    .filter((u) => u.path.startsWith(`${bucket}/`))
    .map((u) => ({ ...u, key: keyOf(bucket, u.path, false) }))
    .filter((u) => u.key.startsWith(prefix))
    .sort((a, b) => compareKeys(a.key, b.key) || a.createdAt.getTime() - b.createdAt.getTime());
  const max = Math.min(Number(call.query.get('max-uploads') ?? 1000) || 1000, 1000);
  let xml = el('Bucket', call.bucket) + el('KeyMarker', '') + el('UploadIdMarker', '') + el('Prefix', prefix) + el('MaxUploads', max)
    + el('IsTruncated', uploads.length > max);
  for (const u of uploads.slice(0, max)) {
    const owner = wrap('Owner', el('ID', call.actor.user) + el('DisplayName', call.actor.user));
    xml += wrap('Upload', el('Key', u.key) + el('UploadId', u.id) + wrap('Initiator', el('ID', call.actor.user) + el('DisplayName', call.actor.user)) + owner
      + el('StorageClass', 'STANDARD') + el('Initiated', iso(u.createdAt)));
  }
  sendXml(call.res, 200, document('ListMultipartUploadsResult', xml));
}

/** Seconds between the spaces a CompleteMultipartUpload answer sends while the parts are joined, so clients do not time out (as S3 does). */
const KEEPALIVE_MS = 10_000;

async function completeUpload(o: S3FrontOptions, call: Call): Promise<void> {
  const { res } = call;
  const path = uploadTarget(o, call);
  const root = parseXml((await readSmallBody(call)).toString('utf8'));
  if (root.name !== 'CompleteMultipartUpload') throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema (root is not CompleteMultipartUpload).');
  const parts = childrenNamed(root, 'Part').map((p) => {
    const number = Number(childText(p, 'PartNumber'));
    const etag = (childText(p, 'ETag') ?? '').trim().replace(/^"|"$/g, '').toLowerCase();
    if (!Number.isInteger(number)) throw new S3Error('InvalidPart', 'One or more of the specified parts could not be found.');
    // NOTE: an ETag that is no MD5 matches no part (InvalidPart), once the upload is found: a
    // completion of an upload that does not exist is NoSuchUpload whatever its parts.
    return { number, md5: /^[0-9a-f]{32}$/.test(etag) ? etag : '-' };
  });
  const id = call.query.get('uploadId')!;
  // NOTE: once the parts are found good, the answer starts and sends a space every few seconds while the parts are
  // joined, so a client's read timeout never fires on a large object; a failure after that is
  // an <Error> document in the 200 answer, which S3 clients look for (S3 does the same).
  let keepalive: NodeJS.Timeout | undefined;
  const start = () => {
    res.writeHead(200, { 'Content-Type': 'application/xml' });
    res.write('<?xml version="1.0" encoding="UTF-8"?>\n');
    keepalive = setInterval(() => res.write(' '), KEEPALIVE_MS);
  };
  try {
    const { object } = await o.multipart.complete(call.actor, id, path, parts, start, {
      replaceMeta: REPLACED, meta: (sizes) => (sizes.length > 1 ? [{ attribute: PARTS_ATTRIBUTE, value: encodeParts(sizes), unit: '' }] : []),
    });
    res.end(document('CompleteMultipartUploadResult', el('Location', `/${call.bucket}/${call.key}`) + el('Bucket', call.bucket) + el('Key', call.key) + el('ETag', etagOf(object)))
      .slice('<?xml version="1.0" encoding="UTF-8"?>\n'.length));
  } catch (err) {
    // NOTE: refused before the joining started: an ordinary error answer.
    if (!res.headersSent) throw err;
    const e = toS3Error(err);
    if (e.code === 'InternalError') o.log.error({ err }, 'completing a multipart upload failed');
    res.end(wrap('Error', el('Code', e.code) + el('Message', e.message)));
  } finally {
    clearInterval(keepalive);
  }
}

/**
 * The headers that describe an object's bytes (not user metadata), each kept as an AVU of its
 * own attribute (`S3/Content-Type`, …: a `/` no `x-amz-meta-` name can hold), given on PutObject,
 * CreateMultipartUpload and CopyObject with REPLACE, and sent back on GET and HEAD.
 */
const DESCRIBING = new Map<string, string>([
  ['S3/Content-Type', 'Content-Type'], ['S3/Cache-Control', 'Cache-Control'], ['S3/Content-Disposition', 'Content-Disposition'],
  ['S3/Content-Encoding', 'Content-Encoding'], ['S3/Content-Language', 'Content-Language'], ['S3/Expires', 'Expires'],
]);
/** The query parameters of a GET or HEAD that set a header of the answer. */
const RESPONSE_OVERRIDES: [string, string][] = [
  ['response-content-type', 'Content-Type'], ['response-content-language', 'Content-Language'], ['response-expires', 'Expires'],
  ['response-cache-control', 'Cache-Control'], ['response-content-disposition', 'Content-Disposition'], ['response-content-encoding', 'Content-Encoding'],
];
/** The part sizes of an object made by a multipart upload (`<size>*<count>,…`), for `partNumber` reads. */
const PARTS_ATTRIBUTE = 'S3/Parts';
/** The attributes a PutObject, a completion or a CopyObject with REPLACE sets anew (an old value goes). */
const REPLACED = [...DESCRIBING.keys(), PARTS_ATTRIBUTE];

/** The describing headers of a request as AVUs (`aws-chunked`, the transfer's own coding, is not the object's). */
function describingMeta(headers: IncomingMessage['headers']): Avu[] {
  const avus: Avu[] = [];
  for (const [attribute, header] of DESCRIBING) {
    let value = headers[header.toLowerCase()];
    if (typeof value !== 'string') continue;
    if (header === 'Content-Encoding') value = value.split(',').map((v) => v.trim()).filter((v) => v !== '' && v.toLowerCase() !== 'aws-chunked').join(', ');
    if (value.trim() === '') continue;
    avus.push({ attribute, value: value.trim(), unit: '' });
  }
  return avus;
}

/** `sizes` as `S3/Parts` holds them: runs of equal sizes, `<size>*<count>`, comma-separated. */
export function encodeParts(sizes: readonly number[]): string {
  const runs: [number, number][] = [];
  for (const size of sizes) {
    const last = runs.at(-1);
    if (last && last[0] === size) last[1]++;
    else runs.push([size, 1]);
  }
  return runs.map(([size, count]) => (count === 1 ? String(size) : `${size}*${count}`)).join(',');
}

/** The part sizes `S3/Parts` holds; null when it is not of that form. */
export function decodeParts(value: string): number[] | null {
  const sizes: number[] = [];
  for (const run of value.split(',')) {
    const m = /^(\d+)(?:\*(\d+))?$/.exec(run.trim());
    if (!m) return null;
    const count = m[2] === undefined ? 1 : Number(m[2]);
    if (count > MAX_PARTS) return null;
    for (let i = 0; i < count; i++) sizes.push(Number(m[1]));
  }
  return sizes.length > MAX_PARTS ? null : sizes;
}

/** The byte range of part `number` (1-based) of an object with `avus`; a whole object not made in parts is its part 1. `InvalidPartNumber`. */
function partRange(avus: readonly Avu[], object: DataObject, number: number): { range: ByteRange | undefined; count: number } {
  const recorded = avus.find((a) => a.attribute === PARTS_ATTRIBUTE);
  const sizes = recorded ? decodeParts(recorded.value) : null;
  const total = sizes?.reduce((a, b) => a + b, 0);
  if (!sizes || total !== object.size) {
    if (number !== 1) throw new S3Error('InvalidPartNumber', 'The requested partnumber is not satisfiable.');
    return { range: undefined, count: 1 };
  }
  if (number > sizes.length) throw new S3Error('InvalidPartNumber', 'The requested partnumber is not satisfiable.');
  const start = sizes.slice(0, number - 1).reduce((a, b) => a + b, 0);
  const size = sizes[number - 1]!;
  return { range: size === 0 ? undefined : { start, end: start + size - 1 }, count: sizes.length };
}

/** The source of a copy (`x-amz-copy-source`: `[/]<bucket>/<key>`, URL-encoded). */
function copySource(o: S3FrontOptions, call: Call): KeyTargetOf {
  const raw = String(call.req.headers['x-amz-copy-source']);
  if (raw.includes('?versionId=') && !/\?versionId=null$/.test(raw)) throw new S3Error('NotImplemented', 'lading keeps no object versions; copy without versionId.');
  const source = awsDecode(raw.split('?')[0]!).replace(/^\//, '');
  const slash = source.indexOf('/');
  if (slash <= 0 || slash === source.length - 1) throw new S3Error('InvalidArgument', 'x-amz-copy-source must be <bucket>/<key>.');
  return keyTarget(bucketPath(o, source.slice(0, slash)), source.slice(slash + 1));
}

type KeyTargetOf = ReturnType<typeof keyTarget>;

/** S3's x-amz-copy-source-if-* conditions on the source of a copy: `PreconditionFailed`. */
function checkCopyConditions(headers: IncomingMessage['headers'], object: DataObject): void {
  const renamed: IncomingMessage['headers'] = {};
  for (const [name, header] of [['if-match', 'x-amz-copy-source-if-match'], ['if-none-match', 'x-amz-copy-source-if-none-match'],
    ['if-modified-since', 'x-amz-copy-source-if-modified-since'], ['if-unmodified-since', 'x-amz-copy-source-if-unmodified-since']] as const) {
    const value = headers[header];
    if (typeof value === 'string') renamed[name] = value;
  }
  if (conditions(renamed, object) !== null) throw new S3Error('PreconditionFailed', 'At least one of the preconditions you specified did not hold.');
}

async function uploadPartCopy(o: S3FrontOptions, call: Call): Promise<void> {
  const { req, res, query } = call;
  const path = uploadTarget(o, call);
  if (!/^\d{1,5}$/.test(query.get('partNumber') ?? '')) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
  const from = copySource(o, call);
  if (from.folder) throw new S3Error('InvalidRequest', 'Keys ending in \'/\' name collections; UploadPartCopy copies from data objects.');
  const header = req.headers['x-amz-copy-source-range'];
  await drain(req);
  const { stream } = await o.backend.openObjectAs(call.actor, from.path, (source) => {
    checkCopyConditions(req.headers, source);
    if (typeof header !== 'string') return {};
    const m = /^bytes=(\d+)-(\d+)$/.exec(header.trim());
    if (!m || Number(m[2]) < Number(m[1]) || Number(m[2]) >= source.size) throw new S3Error('InvalidRange', 'The x-amz-copy-source-range is not a satisfiable range bytes=first-last of the source.');
    return { range: { start: Number(m[1]), end: Number(m[2]) } };
  });
  if (!stream) throw new S3Error('InternalError', 'The copy source could not be read.');
  const part = await o.multipart.putPart(call.actor, query.get('uploadId')!, path, Number(query.get('partNumber')), stream, {});
  sendXml(res, 200, document('CopyPartResult', el('LastModified', iso(part.modifiedAt)) + el('ETag', `"${part.md5}"`)));
}
