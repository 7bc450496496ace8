/**
 * The WebDAV front (RFC 4918, classes 1 and 2) under `/dav`: `/dav/<zone>/home/alice/x` is the
 * entity `/<zone>/home/alice/x`. Every method calls the core as the API does — an upload is
 * `Backend.upload` (the same commit, checksums, rules events and durability as a PUT to
 * `/api/registered`), DELETE is the trash, MOVE and COPY are `Backend.move` and `Backend.copy`,
 * dead properties are metadata — and passes the lock check of `Locks`. It decides no
 * permission: the core does.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, Backend } from '../core/backend.ts';
import { LadingError, isLadingError } from '../core/errors.ts';
import { type LockRequest, type LockTarget, type Locks, lockCovers } from '../core/locks.ts';
import { MAX_AVU_BYTES, type Metadata } from '../core/metadata.ts';
import { type Path, ROOT, baseName, parentOf, parseNewPath } from '../core/path.ts';
import type { QuotaService } from '../core/quotas.ts';
import type { Trash } from '../core/trash.ts';
import type { Avu, DavLock, Entity } from '../core/types.ts';
import { announcedDigests } from '../http/conditional.ts';
import { viaOf } from '../http/authorization.ts';
import { sendDownload } from '../http/download.ts';
import { JSON_TYPE, errorEnvelopeOf, handleError } from '../http/errors.ts';
import { entityTarget } from '../http/target.ts';
import { parseIf } from './if-header.ts';
import {
  MULTISTATUS_END, MULTISTATUS_START, type PropName, type PropRequest, activeLock, avuOf, davEtag, isLive, keyOf,
  needsDead, needsLocks, needsQuota, responseOf, DEAD_PREFIX,
} from './properties.ts';
import { DAV_NS, type XmlElement, child, elements, escapeXml, readXml, serialize } from './xml.ts';

export const DAV_PREFIX = '/dav';

/** The methods WebDAV adds to HTTP, each of which may carry a body. */
export const DAV_METHODS = ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;

/** The largest `DAV:owner` of a lock kept, in bytes of XML. */
const MAX_OWNER_BYTES = 4096;

const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK';

export interface DavDeps {
  backend: Backend;
  trash: Trash;
  metadata: Metadata;
  locks: Locks;
  /** Quotas, for the quota properties (RFC 4331); without them those properties are never found. */
  quotas?: QuotaService | null;
  /** Authenticates a request (see `davAuthenticator`). */
  authenticate: (request: FastifyRequest) => Promise<void>;
  maxUploadBytes: number;
}

/** A WebDAV status with no error code of lading's (207 parts, 409 for a missing parent, …). */
function status(code: number, message: string): LadingError {
  const byStatus: Record<number, ConstructorParameters<typeof LadingError>[0]> = {
    400: 'BAD_REQUEST', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 409: 'CONFLICT', 412: 'PRECONDITION_FAILED',
    415: 'UNSUPPORTED_MEDIA_TYPE', 423: 'LOCKED', 502: 'BAD_REQUEST',
  };
  return new LadingError(byStatus[code] ?? 'BAD_REQUEST', message, { details: { davStatus: code } });
}

/** Sends an error the WebDAV way: its status (or the one `details.davStatus` names), the envelope as body, a challenge with 401. */
function sendDavError(reply: FastifyReply, err: LadingError): FastifyReply {
  const { status: mapped, body } = errorEnvelopeOf(err);
  const code = typeof err.details.davStatus === 'number' ? err.details.davStatus : mapped;
  if (code === 401) {
    // NOTE: a Basic challenge makes clients send a password; over plain HTTP that is only
    // asked for from this machine (a client on loopback), never across a network. Behind a
    // trusted proxy, its X-Forwarded-Proto and -For say which.
    const request = reply.request;
    const safe = request.protocol === 'https' || isLoopback(request.ip);
    reply.header('WWW-Authenticate', safe ? ['Basic realm="lading WebDAV", charset="UTF-8"', 'Bearer realm="lading"'] : 'Bearer realm="lading"');
  }
  if (code === 405) reply.header('Allow', ALLOW);
  if (!reply.request.raw.complete) reply.header('Connection', 'close');
  return reply.code(code).type(JSON_TYPE).send(body);
}

function isLoopback(address: string | undefined): boolean {
  return address === '::1' || address?.startsWith('127.') === true || address?.startsWith('::ffff:127.') === true;
}

/** The entity path a `/dav` request target names. `INVALID_PATH`. */
function davPath(target: string): Path {
  if (target.includes('#')) throw status(400, 'A request target must not hold a fragment (#).');
  const pathname = target.split('?', 1)[0]!;
  if (pathname === DAV_PREFIX || pathname === `${DAV_PREFIX}/`) return ROOT;
  return entityTarget(`${DAV_PREFIX}/`, pathname).path;
}

/** The entity path of a Destination (or tagged If) URL: absolute or absolute-path, under `/dav`. */
function pathOfUrl(url: string): Path {
  let pathname: string;
  try {
    pathname = new URL(url, 'http://x').pathname;
  } catch {
    throw status(400, 'The URL is not valid.');
  }
  if (pathname !== DAV_PREFIX && !pathname.startsWith(`${DAV_PREFIX}/`)) throw status(502, 'The destination is not on this server\'s WebDAV namespace.');
  return davPath(pathname);
}

function depthOf(request: FastifyRequest, fallback: '0' | '1' | 'infinity'): '0' | '1' | 'infinity' {
  const given = request.headers.depth;
  if (typeof given !== 'string') return fallback;
  const d = given.trim().toLowerCase();
  if (d === '0' || d === '1' || d === 'infinity') return d;
  throw status(400, 'Depth is 0, 1 or infinity.');
}

async function statOrNull(backend: Backend, actor: Actor, path: Path): Promise<Entity | null> {
  try {
    return await backend.statAs(actor, path);
  } catch (err) {
    if (isLadingError(err, 'NOT_FOUND')) return null;
    throw err;
  }
}

/** Reads a request body expected to be empty or XML; a body on a method that takes none is refused by the caller. */
async function bodyXml(request: FastifyRequest): Promise<XmlElement | null> {
  if (request.headers['content-length'] === '0' || (request.headers['content-length'] === undefined && request.headers['transfer-encoding'] === undefined)) return null;
  return readXml(request.raw);
}

function propNames(prop: XmlElement): PropName[] {
  return elements(prop).map((e) => ({ ns: e.ns, local: e.local }));
}

function parseTimeout(value: string | undefined): number | null {
  if (value === undefined) return null;
  for (const part of value.split(',')) {
    const t = part.trim();
    if (/^infinite$/i.test(t)) return Infinity;
    const m = /^Second-(\d+)$/i.exec(t);
    if (m) return Number(m[1]);
  }
  return null;
}

export function registerDavRoutes(app: FastifyInstance, deps: DavDeps): void {
  const { backend, locks } = deps;
  const actorOf = (request: FastifyRequest) => backend.actorOf(request.auth!.credential, viaOf(request, 'dav'));

  // NOTE: the metrics count this front's requests under front="dav" (src/metrics/http-metrics.ts).
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config as object | undefined), front: 'dav' } as typeof route.config;
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => handleError(err, request, reply, sendDavError));

  /**
   * Evaluates the If header (412 when no list holds) and answers the lock tokens it submits.
   * `path` is the request's resource.
   */
  const evaluateIf = async (request: FastifyRequest, actor: Actor, path: Path): Promise<Set<string>> => {
    const header = request.headers.if;
    const parsed = parseIf(Array.isArray(header) ? header.join(' ') : header);
    if (!parsed) return new Set();
    const etags = new Map<Path, string | null>();
    const etagAt = async (p: Path) => {
      if (!etags.has(p)) {
        const e = await statOrNull(backend, actor, p).catch(() => null);
        etags.set(p, e ? davEtag(e) : null);
      }
      return etags.get(p)!;
    };
    const lockOf = new Map<string, DavLock | null>();
    for (const list of parsed.lists) {
      const resource = list.resource === null ? path : pathOfUrl(list.resource);
      let holds = list.cut !== true;
      for (const c of holds ? list.conditions : []) {
        let matches: boolean;
        if (c.token !== undefined) {
          if (!lockOf.has(c.token)) lockOf.set(c.token, await locks.get(c.token));
          const lock = lockOf.get(c.token)!;
          matches = lock !== null && lockCovers(lock, resource);
        } else {
          const current = await etagAt(resource);
          matches = current !== null && current === c.etag!.replace(/^W\//, '');
        }
        if (matches === c.not) {
          holds = false;
          break;
        }
      }
      if (holds) return parsed.tokens;
    }
    throw status(412, 'No list of the If header holds.');
  };

  /** The If header's check, then the lock check of `targets`. */
  const mayChange = async (request: FastifyRequest, actor: Actor, path: Path, targets: LockTarget[]) => {
    const submitted = await evaluateIf(request, actor, path);
    await locks.check(actor, targets, submitted);
  };

  const preHandler = async (request: FastifyRequest) => deps.authenticate(request);

  // NOTE: WebDAV is no part of the API's OpenAPI document (`hide`).
  app.route({
    method: 'OPTIONS', url: '/*', schema: { hide: true },
    handler: async (_request, reply) => reply.code(200).header('DAV', '1, 2').header('MS-Author-Via', 'DAV').header('Allow', ALLOW).header('Content-Length', '0').send(),
  });
  app.route({
    method: 'OPTIONS', url: '/', schema: { hide: true },
    handler: async (_request, reply) => reply.code(200).header('DAV', '1, 2').header('MS-Author-Via', 'DAV').header('Allow', ALLOW).header('Content-Length', '0').send(),
  });

  const routes = (method: string | string[], handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => {
    for (const url of ['/', '/*']) app.route({ method: method as 'GET', url, exposeHeadRoute: false, schema: { hide: true }, preHandler, handler });
  };

  routes(['GET', 'HEAD'], async (request, reply) => {
    const path = davPath(request.url);
    const actor = await actorOf(request);
    const entity = await backend.statAs(actor, path);
    if (entity.kind === 'collection') {
      reply.header('ETag', davEtag(entity)).header('Last-Modified', entity.modifiedAt.toUTCString());
      return reply.type('text/html; charset=utf-8').send(request.method === 'HEAD' ? undefined : collectionPage(entity));
    }
    reply.header('OC-Checksum', `SHA256:${davEtag(entity).slice(1, -1)}`);
    return sendDownload(request, reply, (plan) => backend.openObjectAs(actor, path, plan));
  });

  routes('PUT', async (request, reply) => {
    const path = davPath(request.url);
    if (request.url.split('?', 1)[0]!.endsWith('/')) throw status(409, 'PUT names a data object, not a collection (remove the trailing /).');
    if (request.headers['content-range'] !== undefined) throw status(400, 'PUT with Content-Range is not supported; send the whole object.');
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > deps.maxUploadBytes) throw new LadingError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${deps.maxUploadBytes} bytes.`);
    const actor = await actorOf(request);
    const existing = await statOrNull(backend, actor, path);
    if (existing?.kind === 'collection') throw status(405, `'${path}' is a collection.`);
    checkHttpConditions(request, existing);
    await mayChange(request, actor, path, existing ? [{ path }] : [{ path }, { path: parentOf(path) }]);
    let outcome;
    try {
      outcome = await backend.uploadAs(actor, parseNewPath(path), request.raw, {
        overwrite: true, expected: { ...ocChecksum(request), ...announcedDigests(request.headers) }, ...(Number.isSafeInteger(length) ? { declaredSize: length } : {}),
      });
    } catch (err) {
      if (isLadingError(err, 'NOT_FOUND') || isLadingError(err, 'NOT_A_COLLECTION')) throw status(409, `The collection '${parentOf(path)}' does not exist.`);
      throw err;
    }
    const object = outcome.object;
    reply.header('ETag', davEtag(object)).header('OC-Checksum', `SHA256:${davEtag(object).slice(1, -1)}`).header('Last-Modified', object.modifiedAt.toUTCString());
    return reply.code(existing ? 204 : 201).send();
  });

  routes('DELETE', async (request, reply) => {
    const path = davPath(request.url);
    const actor = await actorOf(request);
    await backend.statAs(actor, path);
    await mayChange(request, actor, path, [{ path, below: true }, { path: parentOf(path) }]);
    await deps.trash.trash(actor, path);
    await locks.released(path);
    return reply.code(204).send();
  });

  routes('MKCOL', async (request, reply) => {
    const path = davPath(request.url);
    if (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0' || request.headers['transfer-encoding'] !== undefined) {
      throw status(415, 'MKCOL takes no body.');
    }
    const actor = await actorOf(request);
    if (await statOrNull(backend, actor, path)) throw status(405, `'${path}' exists already.`);
    await mayChange(request, actor, path, [{ path: parentOf(path) }]);
    try {
      await backend.createCollection(request.auth!.credential, parseNewPath(path), { parents: false }, viaOf(request, 'dav'));
    } catch (err) {
      if (isLadingError(err, 'NOT_FOUND') || isLadingError(err, 'NOT_A_COLLECTION')) throw status(409, `The collection '${parentOf(path)}' does not exist.`);
      if (isLadingError(err, 'CONFLICT')) throw status(405, `'${path}' exists already.`);
      throw err;
    }
    return reply.code(201).send();
  });

  const copyOrMove = (move: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const path = davPath(request.url);
    const destination = request.headers.destination;
    if (typeof destination !== 'string') throw status(400, 'Name the target in the Destination header.');
    const target = pathOfUrl(destination);
    const overwrite = String(request.headers.overwrite ?? 'T').trim().toUpperCase();
    if (overwrite !== 'T' && overwrite !== 'F') throw status(400, 'Overwrite is T or F.');
    const actor = await actorOf(request);
    const source = await backend.statAs(actor, path);
    const depth = depthOf(request, 'infinity');
    if (source.kind === 'collection' && (depth === '1' || (move && depth !== 'infinity'))) throw status(400, `Depth ${depth} is not allowed for ${move ? 'MOVE' : 'COPY'} of a collection.`);
    if (target === path) throw status(403, 'The source and the destination are the same.');
    const existing = await statOrNull(backend, actor, target);
    if (existing && overwrite === 'F') throw status(412, `'${target}' exists and Overwrite is F.`);
    const targets: LockTarget[] = [{ path: target, below: true }, { path: parentOf(target) }];
    if (move) targets.push({ path, below: true }, { path: parentOf(path) });
    await mayChange(request, actor, path, targets);
    if (!(await statOrNull(backend, actor, parentOf(target)))) throw status(409, `The collection '${parentOf(target)}' does not exist.`);
    // NOTE: Overwrite replaces what stands at the destination (RFC 4918 §9.8.4, §9.9.3): a data
    // object by a data object in one commit; anything else goes to the trash first.
    const replaceInPlace = existing?.kind === 'dataobject' && source.kind === 'dataobject';
    if (existing && !replaceInPlace) {
      await deps.trash.trash(actor, target);
      await locks.released(target);
    }
    const place = { into: parentOf(target), name: baseName(target), overwrite: replaceInPlace };
    try {
      if (move) {
        await backend.moveAs(actor, path, place);
        await locks.released(path);
      } else if (source.kind === 'collection' && depth === '0') {
        await backend.createCollection(request.auth!.credential, parseNewPath(target), { parents: false }, viaOf(request, 'dav'));
      } else {
        await backend.copyAs(actor, path, place);
      }
    } catch (err) {
      if (isLadingError(err, 'NOT_A_COLLECTION')) throw status(409, `'${parentOf(target)}' is not a collection.`);
      throw err;
    }
    return reply.code(existing ? 204 : 201).send();
  };
  routes('COPY', copyOrMove(false));
  routes('MOVE', copyOrMove(true));

  routes('PROPFIND', async (request, reply) => {
    const path = davPath(request.url);
    const depth = depthOf(request, 'infinity');
    if (depth === 'infinity') {
      reply.code(403).type('application/xml; charset=utf-8');
      return reply.send('<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>');
    }
    const body = await bodyXml(request);
    const wanted = propRequestOf(body);
    const actor = await actorOf(request);
    const entity = await backend.statAs(actor, path);
    const describe = async (e: Entity): Promise<string> => {
      const dead: Avu[] = needsDead(wanted) ? await deps.metadata.list(actor, e.path).catch(() => []) : [];
      const held = needsLocks(wanted) ? await locks.at(e.path) : null;
      const quotas = needsQuota(wanted) && deps.quotas ? await deps.quotas.covering(e.path) : null;
      return responseOf(e, wanted, dead, held, quotas);
    };
    const first = MULTISTATUS_START + await describe(entity);
    reply.code(207).type('application/xml; charset=utf-8');
    if (depth === '0' || entity.kind !== 'collection') return reply.send(first + MULTISTATUS_END);
    const { entries } = await backend.listing(request.auth!.credential, path);
    async function* rest(): AsyncGenerator<string> {
      let text = first;
      for await (const e of entries) {
        text += await describe(e);
        if (text.length >= 64 * 1024) {
          yield text;
          text = '';
        }
      }
      yield text + MULTISTATUS_END;
    }
    return reply.send(Readable.from(rest()));
  });

  routes('PROPPATCH', async (request, reply) => {
    const path = davPath(request.url);
    const body = await bodyXml(request);
    if (!body || body.ns !== DAV_NS || body.local !== 'propertyupdate') throw status(400, 'PROPPATCH takes a DAV:propertyupdate body.');
    const actor = await actorOf(request);
    await backend.statAs(actor, path);
    await mayChange(request, actor, path, [{ path }]);
    const operations: { set: boolean; prop: XmlElement }[] = [];
    for (const op of elements(body)) {
      if (op.ns !== DAV_NS || (op.local !== 'set' && op.local !== 'remove')) continue;
      const prop = child(op, DAV_NS, 'prop');
      if (!prop) throw status(400, `DAV:${op.local} needs a DAV:prop.`);
      for (const p of elements(prop)) operations.push({ set: op.local === 'set', prop: p });
    }
    // NOTE: all or nothing (RFC 4918 §9.2): what would be refused is found before anything is
    // stored, and fails the others too. (What the catalog refuses after that, e.g. when it is
    // unreachable midway, can still leave the properties set so far.)
    const refusal = (o: { set: boolean; prop: XmlElement }): string | null => {
      if (isLive(o.prop)) return '403 Forbidden';
      if (!o.set) return null;
      const avu = avuOf(o.prop);
      if (Buffer.byteLength(avu.attribute) > MAX_AVU_BYTES || Buffer.byteLength(avu.value) > MAX_AVU_BYTES) return '507 Insufficient Storage';
      if (avu.value.includes('\u0000') || !avu.value.isWellFormed()) return '409 Conflict';
      return null;
    };
    const refused = operations.map(refusal);
    const results = new Map<string, { name: PropName; status: string }>();
    if (refused.some((r) => r !== null)) {
      operations.forEach((o, i) => results.set(keyOf(o.prop), { name: o.prop, status: refused[i] ?? '424 Failed Dependency' }));
    } else {
      let existing = await deps.metadata.list(actor, path);
      for (const o of operations) {
        const attribute = `${DEAD_PREFIX}${keyOf(o.prop)}`;
        if (existing.some((m) => m.attribute === attribute)) existing = await deps.metadata.remove(actor, path, attribute);
        if (o.set) existing = await deps.metadata.add(actor, path, avuOf(o.prop));
        results.set(keyOf(o.prop), { name: o.prop, status: '200 OK' });
      }
    }
    let xml = `${MULTISTATUS_START}<D:response><D:href>${escapeXml(request.url.split('?', 1)[0]!)}</D:href>`;
    for (const r of results.values()) {
      xml += `<D:propstat><D:prop><${r.name.local} xmlns="${escapeXml(r.name.ns)}"/></D:prop><D:status>HTTP/1.1 ${r.status}</D:status></D:propstat>`;
    }
    return reply.code(207).type('application/xml; charset=utf-8').send(`${xml}</D:response>${MULTISTATUS_END}`);
  });

  routes('LOCK', async (request, reply) => {
    const path = davPath(request.url);
    const body = await bodyXml(request);
    const actor = await actorOf(request);
    const timeout = parseTimeout(typeof request.headers.timeout === 'string' ? request.headers.timeout : undefined);
    const answer = (lock: DavLock, code: number) => reply.code(code).type('application/xml; charset=utf-8').header('Lock-Token', `<${lock.token}>`)
      .send(`<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(lock)}</D:lockdiscovery></D:prop>`);
    if (!body) {
      // A refresh: the If header names the lock.
      const submitted = await evaluateIf(request, actor, path);
      const token = [...submitted][0];
      if (token === undefined) throw status(400, 'A LOCK without a body refreshes a lock: name it in the If header.');
      const refreshed = await locks.refresh(actor, path, token, timeout);
      return answer(refreshed, 200);
    }
    if (body.ns !== DAV_NS || body.local !== 'lockinfo') throw status(400, 'LOCK takes a DAV:lockinfo body.');
    const scopeEl = child(body, DAV_NS, 'lockscope');
    const scope = scopeEl && child(scopeEl, DAV_NS, 'shared') ? 'shared' : scopeEl && child(scopeEl, DAV_NS, 'exclusive') ? 'exclusive' : null;
    const typeEl = child(body, DAV_NS, 'locktype');
    if (!scope || !typeEl || !child(typeEl, DAV_NS, 'write')) throw status(400, 'A lock is a write lock, exclusive or shared.');
    const owner = child(body, DAV_NS, 'owner');
    const ownerXml = owner ? owner.children.map((c) => (typeof c === 'string' ? escapeXml(c) : serialize(c))).join('') : '';
    // NOTE: kept in the catalog with the lock and sent back in every lockdiscovery.
    if (Buffer.byteLength(ownerXml) > MAX_OWNER_BYTES) throw status(400, `A lock's DAV:owner may be at most ${MAX_OWNER_BYTES} bytes.`);
    const depth = depthOf(request, 'infinity');
    if (depth === '1') throw status(400, 'A lock has depth 0 or infinity.');
    const lockRequest: LockRequest = { scope, depth: depth === '0' ? 'zero' : 'infinity', ownerXml, timeoutSeconds: timeout };
    let existing = await statOrNull(backend, actor, path);
    const submitted = await evaluateIf(request, actor, path);
    let created = false;
    if (!existing) {
      // NOTE: a LOCK of an unmapped URL creates an empty data object (RFC 4918 §7.3), as a PUT would.
      await locks.check(actor, [{ path: parentOf(path) }], submitted);
      try {
        existing = (await backend.uploadAs(actor, parseNewPath(path), Readable.from([]), { overwrite: false })).object;
      } catch (err) {
        if (isLadingError(err, 'NOT_FOUND') || isLadingError(err, 'NOT_A_COLLECTION')) throw status(409, `The collection '${parentOf(path)}' does not exist.`);
        throw err;
      }
      created = true;
    }
    const lock = await locks.lock(actor, path, lockRequest);
    return answer(lock, created ? 201 : 200);
  });

  routes('UNLOCK', async (request, reply) => {
    const path = davPath(request.url);
    const token = /^\s*<([^>]+)>\s*$/.exec(String(request.headers['lock-token'] ?? ''))?.[1];
    if (token === undefined) throw status(400, 'Name the lock in the Lock-Token header.');
    const actor = await actorOf(request);
    await locks.unlock(actor, path, token);
    return reply.code(204).send();
  });
}

/** What a PROPFIND body asks for: allprop when empty. `BAD_REQUEST` for any other body. */
function propRequestOf(body: XmlElement | null): PropRequest {
  if (!body) return { kind: 'allprop' };
  if (body.ns !== DAV_NS || body.local !== 'propfind') throw status(400, 'PROPFIND takes a DAV:propfind body.');
  const prop = child(body, DAV_NS, 'prop');
  if (prop) return { kind: 'prop', names: propNames(prop) };
  if (child(body, DAV_NS, 'propname')) return { kind: 'propname' };
  if (child(body, DAV_NS, 'allprop')) return { kind: 'allprop' };
  throw status(400, 'A DAV:propfind holds DAV:prop, DAV:propname or DAV:allprop.');
}

/** If-Match and If-None-Match of a PUT, against what stands at its path (RFC 9110 §13.1). */
function checkHttpConditions(request: FastifyRequest, existing: Entity | null): void {
  const match = request.headers['if-match'];
  const noneMatch = request.headers['if-none-match'];
  const etag = existing ? davEtag(existing) : null;
  const listed = (value: string) => value.split(',').map((v) => v.trim().replace(/^W\//, ''));
  if (match !== undefined && (etag === null || (match.trim() !== '*' && !listed(match).includes(etag)))) throw status(412, 'If-Match does not hold.');
  if (noneMatch !== undefined && etag !== null && (noneMatch.trim() === '*' || listed(noneMatch).includes(etag))) throw status(412, 'If-None-Match does not hold.');
}

/** The digest an `OC-Checksum` header announces (ownCloud's `MD5:<hex>`; SHA-1 is not checked). */
function ocChecksum(request: FastifyRequest): { md5?: Buffer; sha256?: Buffer } {
  const header = request.headers['oc-checksum'];
  if (typeof header !== 'string') return {};
  const m = /^\s*(MD5|SHA256):([0-9a-fA-F]+)\s*$/i.exec(header);
  if (!m) return {};
  const bytes = Buffer.from(m[2]!, 'hex');
  return m[1]!.toUpperCase() === 'MD5' ? (bytes.length === 16 ? { md5: bytes } : {}) : (bytes.length === 32 ? { sha256: bytes } : {});
}

/** What a browser that GETs a collection sees. */
function collectionPage(collection: Entity): string {
  const title = escapeXml(collection.path);
  return `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><p>This is a WebDAV collection: open it with a WebDAV client (the web app's API access page says how).</p>`;
}

/**
 * Mounts the WebDAV front on `app` under `/dav`: teaches the router WebDAV's methods, then
 * registers the routes in a scope of their own (their own body parsing and error answers).
 */
export async function registerDav(app: FastifyInstance, deps: DavDeps): Promise<void> {
  for (const method of DAV_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  // NOTE: Windows' WebDAV client (the Mini-Redirector) asks OPTIONS of the server's root before
  // anything below it, and maps no drive unless the answer says DAV.
  app.route({
    method: 'OPTIONS', url: '/', schema: { hide: true },
    handler: async (_request, reply) => reply.code(200).header('DAV', '1, 2').header('MS-Author-Via', 'DAV')
      .header('Allow', app.allowOf('/') ?? 'GET, HEAD, OPTIONS').header('Content-Length', '0').send(),
  });
  await app.register(async (scope) => registerDavRoutes(scope, deps), { prefix: DAV_PREFIX });
}
