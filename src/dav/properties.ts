/**
 * WebDAV properties (RFC 4918 §15): the live ones lading computes from an entity (and the PID
 * and checksum in a namespace of lading's, and ownCloud's `checksums` that rclone reads), the
 * dead ones PROPPATCH stores as AVUs named `dav:{namespace}name`, and the XML of one
 * `DAV:response` of a multistatus.
 */
import { checksumDigest } from '../core/meter.ts';
import type { QuotaRecord } from '../core/quotas.ts';
import type { Avu, DavLock, Entity } from '../core/types.ts';
import { encodePath } from '../http/envelope.ts';
import { DAV_NS, type XmlElement, escapeXml, serialize } from './xml.ts';

/** lading's own properties: `pid` and `checksum`. */
export const LADING_NS = 'urn:lading:webdav';
/** ownCloud's, whose `checksums` rclone's owncloud and nextcloud vendors read. */
export const OC_NS = 'http://owncloud.org/ns';

/** The prefix of the AVUs that hold dead properties: `dav:{namespace}name`. */
export const DEAD_PREFIX = 'dav:';
/** The unit of an AVU whose value is an XML fragment (else it is text). */
export const XML_UNIT = 'dav:xml';
/** The unit of an AVU standing for an empty value (an AVU's value cannot be empty). */
export const EMPTY_UNIT = 'dav:empty';

/** A property's name: namespace and local name. */
export interface PropName {
  ns: string;
  local: string;
}

export const keyOf = (p: PropName): string => `{${p.ns}}${p.local}`;

/** The ETag of an entity: a data object's SHA-256 (as downloads give it); a collection's changes with it. */
export function davEtag(entity: Entity): string {
  return entity.kind === 'dataobject' ? `"${checksumDigest(entity.checksum).toString('hex')}"` : `"c-${entity.id}-${entity.modifiedAt.getTime()}"`;
}

/** The `href` of an entity: under `/dav`, each segment encoded, a collection's ending in `/`. */
export function hrefOf(entity: Entity): string {
  return `/dav${entity.path === '/' ? '' : encodePath(entity.path)}${entity.kind === 'collection' ? '/' : ''}`;
}

/** The `DAV:activelock` of a lock. */
export function activeLock(lock: DavLock): string {
  const href = `/dav${lock.path === '/' ? '' : encodePath(lock.path)}`;
  return `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>`
    + `<D:depth>${lock.depth === 'zero' ? '0' : 'infinity'}</D:depth>${lock.ownerXml ? `<D:owner>${lock.ownerXml}</D:owner>` : ''}`
    + `<D:timeout>Second-${Math.max(0, Math.round((lock.expiresAt.getTime() - Date.now()) / 1000))}</D:timeout>`
    + `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken><D:lockroot><D:href>${escapeXml(href)}</D:href></D:lockroot></D:activelock>`;
}

const SUPPORTED_LOCK = '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>'
  + '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

/** What a live property's value needs beyond the entity. */
interface LiveContext {
  locks: DavLock[] | null;
  /** The quotas at and above the entity (when `needsQuota`). */
  quotas: QuotaRecord[] | null;
}

/**
 * The byte quota that binds at an entity: of those at and above it with a byte bound, the one
 * with the least room left (RFC 4331 leaves which to the server); null when none has one.
 */
function bindingQuota(quotas: QuotaRecord[] | null): QuotaRecord | null {
  let best: QuotaRecord | null = null;
  for (const q of quotas ?? []) {
    if (q.maxBytes === null) continue;
    if (!best || q.maxBytes - q.bytes < best.maxBytes! - best.bytes) best = q;
  }
  return best;
}

type Live = (e: Entity, c: LiveContext) => string | null;

/** The live properties, by `{ns}name`: their XML content, or null where the entity has none. */
const LIVE = new Map<string, { prefix: string; value: Live; inAllprop: boolean }>([
  ['{DAV:}resourcetype', { prefix: 'D', inAllprop: true, value: (e) => (e.kind === 'collection' ? '<D:collection/>' : '') }],
  ['{DAV:}displayname', { prefix: 'D', inAllprop: true, value: (e) => escapeXml(e.name) }],
  ['{DAV:}getlastmodified', { prefix: 'D', inAllprop: true, value: (e) => e.modifiedAt.toUTCString() }],
  ['{DAV:}creationdate', { prefix: 'D', inAllprop: true, value: (e) => e.createdAt.toISOString() }],
  ['{DAV:}getcontentlength', { prefix: 'D', inAllprop: true, value: (e) => (e.kind === 'dataobject' ? String(e.size) : null) }],
  ['{DAV:}getcontenttype', { prefix: 'D', inAllprop: true, value: (e) => (e.kind === 'dataobject' ? 'application/octet-stream' : 'httpd/unix-directory') }],
  ['{DAV:}getetag', { prefix: 'D', inAllprop: true, value: (e) => escapeXml(davEtag(e)) }],
  ['{DAV:}supportedlock', { prefix: 'D', inAllprop: true, value: () => SUPPORTED_LOCK }],
  ['{DAV:}lockdiscovery', {
    prefix: 'D', inAllprop: true,
    value: (_e, c) => (c.locks ?? []).map((l) => activeLock(l)).join(''),
  }],
  // NOTE: RFC 4331: shown only when asked for by name, never in allprop, and only where a
  // quota with a byte bound applies (usage is counted for quotas only).
  ['{DAV:}quota-available-bytes', {
    prefix: 'D', inAllprop: false,
    value: (_e, c) => {
      const q = bindingQuota(c.quotas);
      return q ? String(Math.max(0, q.maxBytes! - q.bytes)) : null;
    },
  }],
  ['{DAV:}quota-used-bytes', { prefix: 'D', inAllprop: false, value: (_e, c) => { const q = bindingQuota(c.quotas); return q ? String(q.bytes) : null; } }],
  [`{${LADING_NS}}pid`, { prefix: 'L', inAllprop: true, value: (e) => (e.pid === null ? null : escapeXml(e.pid)) }],
  [`{${LADING_NS}}checksum`, { prefix: 'L', inAllprop: true, value: (e) => (e.kind === 'dataobject' ? escapeXml(e.checksum) : null) }],
  [`{${OC_NS}}checksums`, {
    prefix: 'oc', inAllprop: false,
    value: (e) => (e.kind === 'dataobject' ? `<oc:checksum>SHA256:${checksumDigest(e.checksum).toString('hex')}</oc:checksum>` : null),
  }],
]);

/** Whether `name` is a live (computed, protected) property. */
export function isLive(name: PropName): boolean {
  return LIVE.has(keyOf(name)) || name.ns === LADING_NS || (name.ns === DAV_NS && ['quota-available-bytes', 'quota-used-bytes'].includes(name.local));
}

/** Whether answering `request` needs the entity's locks (`DAV:lockdiscovery` is asked, or everything). */
export function needsLocks(request: PropRequest): boolean {
  return request.kind === 'allprop' || (request.kind === 'prop' && request.names.some((n) => n.ns === DAV_NS && n.local === 'lockdiscovery'));
}

/** Whether answering `request` needs the quotas at the entity (`DAV:quota-available-bytes` or `DAV:quota-used-bytes` is asked). */
export function needsQuota(request: PropRequest): boolean {
  return request.kind === 'prop' && request.names.some((n) => n.ns === DAV_NS && (n.local === 'quota-available-bytes' || n.local === 'quota-used-bytes'));
}

/** Whether answering `request` needs the entity's dead properties. */
export function needsDead(request: PropRequest): boolean {
  return request.kind !== 'prop' || request.names.some((n) => !LIVE.has(keyOf(n)));
}

/** What a PROPFIND asks for. */
export type PropRequest = { kind: 'allprop' } | { kind: 'propname' } | { kind: 'prop'; names: PropName[] };

/** A property name as an empty element of its own namespace. */
function emptyElement(name: PropName, content = ''): string {
  const prefix = [...LIVE.entries()].find(([k]) => k === keyOf(name))?.[1].prefix;
  if (prefix) return content === '' ? `<${prefix}:${name.local}/>` : `<${prefix}:${name.local}>${content}</${prefix}:${name.local}>`;
  const ns = ` xmlns="${escapeXml(name.ns)}"`;
  return content === '' ? `<${name.local}${ns}/>` : `<${name.local}${ns}>${content}</${name.local}>`;
}

/** The dead property an AVU holds, or null when the AVU is not one. */
export function deadOf(avu: Avu): { name: PropName; xml: string } | null {
  if (!avu.attribute.startsWith(DEAD_PREFIX)) return null;
  const m = /^\{(.*)\}([^{}]+)$/s.exec(avu.attribute.slice(DEAD_PREFIX.length));
  if (!m) return null;
  const content = avu.unit === XML_UNIT ? avu.value : avu.unit === EMPTY_UNIT ? '' : escapeXml(avu.value);
  return { name: { ns: m[1]!, local: m[2]! }, xml: content };
}

/**
 * The AVU that stores the dead property `el` (a PROPPATCH `set`): its content as text when it
 * holds text only, else as XML that keeps its namespaces.
 */
export function avuOf(el: XmlElement): Avu {
  const attribute = `${DEAD_PREFIX}${keyOf(el)}`;
  if (el.children.length === 0) return { attribute, value: '-', unit: EMPTY_UNIT };
  if (el.children.every((c) => typeof c === 'string')) {
    const text = el.children.join('');
    return text === '' ? { attribute, value: '-', unit: EMPTY_UNIT } : { attribute, value: text, unit: '' };
  }
  return { attribute, value: el.children.map((c) => (typeof c === 'string' ? escapeXml(c) : serialize(c))).join(''), unit: XML_UNIT };
}

/**
 * One `DAV:response` for `entity`: the properties `request` asks for that it has (200) and
 * those it has not (404). `dead` are its AVUs (needed when `needsDead`), `locks` those
 * covering it (needed when `needsLocks`), `quotas` those at and above it (when `needsQuota`).
 */
export function responseOf(entity: Entity, request: PropRequest, dead: Avu[], locks: DavLock[] | null, quotas: QuotaRecord[] | null = null): string {
  const context: LiveContext = { locks, quotas };
  const found: string[] = [];
  const missing: string[] = [];
  const deadProps = dead.map(deadOf).filter((d) => d !== null);
  if (request.kind === 'prop') {
    for (const name of request.names) {
      const live = LIVE.get(keyOf(name));
      if (live) {
        const value = live.value(entity, context);
        (value === null ? missing : found).push(emptyElement(name, value ?? ''));
        continue;
      }
      const d = deadProps.find((p) => p.name.ns === name.ns && p.name.local === name.local);
      (d ? found : missing).push(emptyElement(name, d?.xml ?? ''));
    }
  } else {
    for (const [key, live] of LIVE) {
      if (!live.inAllprop) continue;
      const value = live.value(entity, context);
      if (value === null) continue;
      const m = /^\{(.*)\}(.*)$/.exec(key)!;
      found.push(emptyElement({ ns: m[1]!, local: m[2]! }, request.kind === 'propname' ? '' : value));
    }
    for (const d of deadProps) found.push(emptyElement(d.name, request.kind === 'propname' ? '' : d.xml));
  }
  let xml = `<D:response><D:href>${escapeXml(hrefOf(entity))}</D:href>`;
  if (found.length > 0) xml += `<D:propstat><D:prop>${found.join('')}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
  if (missing.length > 0) xml += `<D:propstat><D:prop>${missing.join('')}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`;
  return `${xml}</D:response>`;
}

/** The start of a multistatus body, declaring the prefixes `responseOf` uses. */
export const MULTISTATUS_START = `<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:" xmlns:L="${LADING_NS}" xmlns:oc="${OC_NS}">`;
export const MULTISTATUS_END = '</D:multistatus>';
