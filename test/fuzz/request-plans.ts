/**
 * Requests generated from the OpenAPI document: for each operation, fast-check plans of its
 * path, query, body and credentials (valid, so that requests reach the handlers, or invalid and
 * at the edges), and their resolution against what a scenario has created so far into the bytes
 * to send. Plans are data, so fast-check can shrink and replay them; this module sends nothing.
 */
import fc from 'fast-check';
import type { JsonSchema, Operation, ParameterDoc } from './openapi-document.ts';
import type { ConcreteRequest } from './http-exchange.ts';
import { type Hints, edgeString, edgeToken, entityName, invalidValue, safeName, validValue } from './schema-arbitraries.ts';

/** Which credential a request carries. */
export type AuthPlan = 'user' | 'none' | 'garbage' | 'malformed' | 'revoked' | 'other-user' | 'issuer';

/**
 * A path parameter, symbolically: an entity the scenario made, a new child of one, a PID the
 * scenario saw, or hostile text. Resolved when the step runs, so it always names current state.
 */
export type TargetPlan =
  | { kind: 'existing'; pick: number; trailingSlash: boolean }
  | { kind: 'new'; parent: number; name: string; trailingSlash: boolean }
  | { kind: 'hostile'; tail: string }
  | { kind: 'outside'; raw: string }
  | { kind: 'pid'; pick: number }
  | { kind: 'text'; value: string };

/** A JSON body's `path` value that resolves like a path parameter (to a backend path, not a URL). */
class PathRef {
  readonly target: TargetPlan;
  constructor(target: TargetPlan) {
    this.target = target;
  }
}

export type BodyPlan =
  | { kind: 'none' }
  | { kind: 'json'; mediaType: string; value: unknown; damage: 'none' | 'invalid-utf8' | 'truncated' | 'empty' }
  | { kind: 'urlencoded'; value: unknown }
  | { kind: 'octets'; contentType: string | null; bytes: Uint8Array }
  | { kind: 'multipart'; field: string; filename: string; bytes: Uint8Array; boundary: 'ok' | 'missing' | 'unterminated' }
  | { kind: 'text'; contentType: string; text: string }
  /** The user's certificate signing request (known once the server runs). */
  | { kind: 'csr'; contentType: string };

export interface RequestPlan {
  operationId: string;
  auth: AuthPlan;
  target: TargetPlan | null;
  query: [string, unknown][];
  body: BodyPlan;
}

/** What a scenario has made so far, in the backend's namespace. */
export interface ScenarioState {
  /** Collections and data objects; the scenario's sandbox collection is first. */
  entities: { path: string; kind: 'collection' | 'dataobject' }[];
  /** PIDs seen in responses. */
  pids: string[];
}

/** A resolved request, and the entity it asks to create when that is known in advance. */
export interface ResolvedRequest {
  request: ConcreteRequest;
  /** Set when the request would create or rename to `parent/name` if accepted. */
  intent: { parent: string; name: string } | null;
  /** For a rename of an entity the scenario knows, its path before the rename. */
  renames: string | null;
  /** True when the body was deliberately made invalid UTF-8 or invalid JSON. */
  malformedBody: boolean;
}

/** Bearer values of the credentials the plans name; `fresh` logs in anew (for logout). */
export interface Credentials {
  user: string;
  otherUser: string;
  revoked: string;
  issuer: string;
  fresh(): Promise<string>;
  /** A PEM certificate signing request with the user's name, for the CA endpoint. */
  csr: string;
}

const REGISTERED = '/api/registered';

/** Operations whose wildcard names a backend path, like `/api/registered/{*}`. */
const ENTITY_ROUTES = [REGISTERED, '/api/acl', '/api/metadata', '/api/publish', '/api/public'];

/**
 * How far a part of a plan strays: `valid` uses only values the document allows and the
 * user's credential, so requests reach the handlers and build state; `any` adds wrong types,
 * missing fields, other credentials, hostile paths and broken bodies.
 */
type Mode = 'valid' | 'any';

// NOTE: the wildcard parameter `*` of `/api/registered/{*}` is a backend path, of `/api/pids/{*}`
// and `/api/handles/{*}` a PID; the document types both only as strings.
function targetKindOf(template: string): 'registered' | 'pid' | null {
  if (ENTITY_ROUTES.some((prefix) => template.startsWith(`${prefix}/`))) return 'registered';
  if (template.startsWith('/api/pids/') || template.startsWith('/api/handles/')) return 'pid';
  return null;
}

const HOSTILE_TAILS = [
  '..', '../..', '%2e%2e', '%2E%2E/%2e%2e', '.', 'a/../..', '%2F', 'x%2Fy', '%2f..%2f', '%00', 'x%00y', '%', '%zz', '%ff',
  '%c0%ae%c0%ae', '%ed%a0%80', '%e2%80%a8', '%c2%85', '%e2%80%ae', '%ef%bb%bf', '%0a', '%7f', '\\..\\..', 'a//b', '~', '%u002e',
];
const OUTSIDE_PATHS = [
  '', '/', '/tz', '/tz/', '/tz/home', '/tz/home/', '/tz/home/bob/x', '/tz/home/nobody/', '/other/zone', '/tz/home/alice/../bob',
  '/tz/home/alice/%2e%2e/bob', '//tz//home', '/tz/home/alice/' + 'n'.repeat(300), '/tz/home/alice/' + 'd/'.repeat(2100),
];

/** Backend paths for `/api/registered/{*}`: mostly entities of the scenario or new children of them. */
function registeredTarget(mode: Mode): fc.Arbitrary<TargetPlan> {
  const stray = mode === 'any' ? 1 : 0;
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('existing' as const), pick: fc.nat(), trailingSlash: fc.boolean() }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('new' as const), parent: fc.nat(), name: entityName, trailingSlash: fc.boolean() }) },
    { weight: stray, arbitrary: fc.record({ kind: fc.constant('hostile' as const), tail: fc.oneof(fc.constantFrom(...HOSTILE_TAILS), edgeToken.map(encodeWtf8)) }) },
    { weight: stray, arbitrary: fc.record({ kind: fc.constant('outside' as const), raw: fc.constantFrom(...OUTSIDE_PATHS) }) },
  );
}

/** PIDs for `/api/pids/{*}` and `/api/handles/{*}`: ones the scenario saw, or malformed ones. */
function pidTarget(mode: Mode): fc.Arbitrary<TargetPlan> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('pid' as const), pick: fc.nat() }) },
    { weight: mode === 'any' ? 2 : 0, arbitrary: fc.record({ kind: fc.constant('text' as const), value: fc.oneof(fc.constantFrom('21.T99999/none', '21.T99999', '/', '21.T99999/../x', '%zz/x', 'a/%ff'), edgeString.map(encodeWtf8)) }) },
  );
}

/** Backend paths for a JSON body's `path`: mostly a new collection in the sandbox. */
const pathRef: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('new' as const), parent: fc.nat(), name: entityName, trailingSlash: fc.constant(false) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('existing' as const), pick: fc.nat(), trailingSlash: fc.constant(false) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hostile' as const), tail: fc.constantFrom(...HOSTILE_TAILS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('outside' as const), raw: fc.constantFrom(...OUTSIDE_PATHS) }) },
).map((t) => new PathRef(t));

/** A form's file name: a new entity's name, or one with a directory part as some clients send. */
const formFileName: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: entityName },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('dir/', 'a/b/', '../', '..\\', 'C:\\Users\\x\\', '/'), safeName).map(([dir, name]) => dir + name) },
);

/** Meanings of named properties and parameters, for values that reach the handlers. */
const HINTS: Hints = {
  path: pathRef,
  newname: entityName,
  principal: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('bob', 'public', 'alice') }, { weight: 1, arbitrary: fc.constantFrom('anonymous', 'nobody', '_system') }),
  attribute: fc.oneof({ weight: 4, arbitrary: safeName }, { weight: 1, arbitrary: fc.constantFrom('PID', 'EUDAT/ROR') }),
  username: fc.oneof({ weight: 3, arbitrary: fc.constant('alice') }, { weight: 1, arbitrary: edgeString }),
  password: fc.oneof({ weight: 3, arbitrary: fc.constant('pw-alice') }, { weight: 1, arbitrary: edgeString }),
};

/** Replaces symbolic values by a placeholder of their wire type (for validity checks). */
function plain(value: unknown): unknown {
  if (value instanceof PathRef) return '/placeholder';
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const bytes = fc.oneof(
  { weight: 4, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.constantFrom(new Uint8Array(0), new TextEncoder().encode('\u2028\ufeff\u0000')) },
);

const none = fc.constant([] as [string, unknown][]);

function authArb(op: Operation, mode: Mode): fc.Arbitrary<AuthPlan> {
  const own: AuthPlan = op.template.startsWith('/ca/') ? 'issuer' : op.secured ? 'user' : 'none';
  if (mode === 'valid') return fc.constant(own);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(own) },
    { weight: 3, arbitrary: fc.constantFrom<AuthPlan>('user', 'none', 'garbage', 'malformed', 'revoked', 'other-user') },
  );
}

function queryArb(params: ParameterDoc[], mode: Mode): fc.Arbitrary<[string, unknown][]> {
  const perParam = params.filter((p) => p.in === 'query').map((p) => {
    const valid = validValue(p.schema, HINTS, p.name);
    return fc.oneof(
      { weight: p.required ? 0 : 3, arbitrary: none },
      { weight: 4, arbitrary: valid.map((v) => [[p.name, v]] as [string, unknown][]) },
      { weight: mode === 'any' ? 3 : 0, arbitrary: invalidValue(p.schema, HINTS, plain).map((v) => [[p.name, v]] as [string, unknown][]) },
      { weight: mode === 'any' ? 1 : 0, arbitrary: fc.tuple(valid, valid).map(([a, b]) => [[p.name, a], [p.name, b]] as [string, unknown][]) },
    );
  });
  const unknown = mode === 'valid' ? none : fc.oneof({ weight: 3, arbitrary: none }, { weight: 1, arbitrary: fc.tuple(safeName, edgeString).map((pair) => [pair]) });
  return fc.tuple(unknown, ...perParam).map((lists) => lists.flat());
}

/** Bodies of one documented media type: its schema's values, in the form the media type takes. */
function mediaBodyArb(mediaType: string, schema: JsonSchema, mode: Mode): fc.Arbitrary<BodyPlan> {
  const strict = mode === 'valid';
  switch (mediaType) {
    case 'application/json': {
      const valid = validValue(schema, HINTS);
      if (strict) return valid.map((value) => ({ kind: 'json' as const, mediaType, value, damage: 'none' as const }));
      return fc.oneof(
        invalidValue(schema, HINTS, plain).map((value) => ({ kind: 'json' as const, mediaType, value, damage: 'none' as const })),
        fc.tuple(valid, fc.constantFrom('invalid-utf8' as const, 'truncated' as const, 'empty' as const)).map(([value, damage]) => ({ kind: 'json' as const, mediaType, value, damage })),
      );
    }
    case 'application/x-www-form-urlencoded':
      return (strict ? validValue(schema, HINTS) : invalidValue(schema, HINTS, plain)).map((value) => ({ kind: 'urlencoded' as const, value }));
    case 'application/octet-stream':
      return fc.record({ kind: fc.constant('octets' as const), contentType: strict ? fc.constant(mediaType) : fc.constantFrom(mediaType, null, `${mediaType}; x=1`), bytes });
    case 'multipart/form-data':
      // NOTE: the document describes the form as an object of fields; the fuzzer sends the one
      // file field the schema requires, as a browser would.
      return fc.record({
        kind: fc.constant('multipart' as const),
        field: strict ? fc.constant(Object.keys(schema.properties ?? { file: {} })[0] ?? 'file') : fc.oneof({ weight: 3, arbitrary: fc.constant('file') }, { weight: 1, arbitrary: edgeString }),
        filename: formFileName,
        bytes,
        boundary: strict ? fc.constant('ok' as const) : fc.constantFrom('ok' as const, 'missing' as const, 'unterminated' as const),
      });
    case 'application/pkcs10':
    case 'application/x-pem-file':
      return strict
        ? fc.constant({ kind: 'csr' as const, contentType: mediaType })
        : fc.record({ kind: fc.constant('text' as const), contentType: fc.constant(mediaType), text: fc.oneof(edgeString, fc.constant('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n')) });
    default:
      return (strict ? validValue(schema, HINTS) : invalidValue(schema, HINTS, plain)).map((v) => ({ kind: 'text' as const, contentType: mediaType, text: typeof v === 'string' ? v : JSON.stringify(v) }));
  }
}

/** A body that no documented media type describes (or none at all). */
const strayBody: fc.Arbitrary<BodyPlan> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('octets' as const), contentType: fc.constantFrom('application/octet-stream', null), bytes }),
  fc.record({ kind: fc.constant('text' as const), contentType: fc.constantFrom('text/plain', 'application/xml', 'application/json', 'application/json; charset=iso-8859-1', 'application/x-www-form-urlencoded', 'multipart/form-data'), text: fc.constantFrom('', '{}', '{"path":"/tz/home/alice"}', 'path=/tz', '<x/>') }),
);

/**
 * Bodies from the operation's documented request body, one arbitrary per media type; `any` mode
 * adds invalid values, damaged and broken forms, and bodies of undocumented media types.
 */
function bodyArb(op: Operation, mode: Mode): fc.Arbitrary<BodyPlan> {
  const media = Object.entries(op.requestBody?.content ?? {});
  if (media.length === 0) return mode === 'valid' ? fc.constant({ kind: 'none' as const }) : strayBody;
  const documented = media.map(([type, { schema = {} as JsonSchema }]) => mediaBodyArb(type, schema, mode));
  return mode === 'valid' ? fc.oneof(...documented) : fc.oneof({ weight: 3, arbitrary: fc.oneof(...documented) }, { weight: 1, arbitrary: strayBody });
}

/** The part of a request a plan makes defective; the other parts stay valid. */
type Defect = 'none' | 'auth' | 'target' | 'query' | 'body';

function planArb(op: Operation, defect: Defect): fc.Arbitrary<RequestPlan> {
  const mode = (part: Defect): Mode => (part === defect ? 'any' : 'valid');
  const kind = targetKindOf(op.template);
  const target: fc.Arbitrary<TargetPlan | null> = kind === 'registered' ? registeredTarget(mode('target')) : kind === 'pid' ? pidTarget(mode('target')) : fc.constant(null);
  return fc.record({
    operationId: fc.constant(op.id),
    auth: authArb(op, mode('auth')),
    target,
    query: queryArb(op.parameters, mode('query')),
    body: bodyArb(op, mode('body')),
  });
}

/**
 * Plans for one operation from its document: mostly valid ones (which build the scenario's
 * state), the rest with one defective part each, so that a defect meets a handler rather than
 * the first validation step that another defect would trip.
 */
export function requestPlanArb(op: Operation): fc.Arbitrary<RequestPlan> {
  return fc.oneof(
    { weight: 4, arbitrary: planArb(op, 'none') },
    { weight: 1, arbitrary: planArb(op, 'auth') },
    { weight: 1, arbitrary: planArb(op, 'target') },
    { weight: 1, arbitrary: planArb(op, 'query') },
    { weight: 2, arbitrary: planArb(op, 'body') },
  );
}

/** Percent-encodes every byte but unreserved ones; lone surrogates as their WTF-8 bytes. */
function encodeWtf8(text: string): string {
  let out = '';
  for (const ch of text) {
    if (/^[A-Za-z0-9\-._~]$/.test(ch)) {
      out += ch;
      continue;
    }
    for (const b of wtf8Bytes(ch.codePointAt(0)!)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function wtf8Bytes(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/** A backend path as a URL path: each segment percent-encoded (WTF-8). */
export function encodeBackendPath(path: string): string {
  return path.split('/').map(encodeWtf8).join('/');
}

/** The parent of an absolute backend path; the root is its own parent. */
export function parentPathOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function pick<T>(items: readonly T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

/** The backend path (unencoded) a target names, and the entity it would create. */
function backendPathOf(t: TargetPlan, state: ScenarioState): { path: string; intent: ResolvedRequest['intent'] } {
  const sandbox = state.entities[0]!.path;
  switch (t.kind) {
    case 'existing':
      return { path: pick(state.entities, t.pick)!.path, intent: null };
    case 'new': {
      const parent = pick(state.entities.filter((e) => e.kind === 'collection'), t.parent)!.path;
      // An empty name names the parent, and a `/` in the name of a JSON path makes several
      // segments: neither asks for one new entity of that name.
      return { path: `${parent}/${t.name}`, intent: t.name === '' || t.name.includes('/') ? null : { parent, name: t.name } };
    }
    case 'hostile':
      return { path: `${sandbox}/${t.tail}`, intent: null };
    case 'outside':
      return { path: t.raw, intent: null };
    case 'pid':
    case 'text':
      throw new Error(`a ${t.kind} target is not a backend path`);
  }
}

/** The URL path a target names, as sent (percent-encoded except for hostile raw text). */
function urlOf(template: string, t: TargetPlan | null, state: ScenarioState): { url: string; intent: ResolvedRequest['intent']; isCollection: boolean } {
  if (!t) return { url: template, intent: null, isCollection: false };
  const prefix = template.slice(0, template.indexOf('{'));
  // NOTE: the route's own prefix (`/api/registered`, `/api/acl`, …) for backend paths.
  const route = prefix.replace(/\/$/, '');
  switch (t.kind) {
    case 'pid':
      return { url: prefix + (pick(state.pids, t.pick) ?? '21.T99999/00000000-0000-0000-0000-000000000000').split('/').map(encodeWtf8).join('/'), intent: null, isCollection: false };
    case 'text':
      return { url: prefix + t.value, intent: null, isCollection: false };
    case 'hostile':
      return { url: `${route}${encodeBackendPath(state.entities[0]!.path)}/${t.tail}`, intent: null, isCollection: false };
    case 'outside':
      return { url: `${route}${t.raw.startsWith('/') || t.raw === '' ? '' : '/'}${t.raw.split('/').map((s) => (s.startsWith('%') || s === '..' ? s : encodeWtf8(s))).join('/')}`, intent: null, isCollection: false };
    case 'existing': {
      const entity = pick(state.entities, t.pick)!;
      return { url: `${route}${encodeBackendPath(entity.path)}${t.trailingSlash ? '/' : ''}`, intent: null, isCollection: entity.kind === 'collection' };
    }
    case 'new': {
      const { path, intent } = backendPathOf(t, state);
      return { url: `${route}${encodeBackendPath(path)}${t.trailingSlash ? '/' : ''}`, intent, isCollection: false };
    }
  }
}

function resolveJson(value: unknown, state: ScenarioState, intents: ResolvedRequest['intent'][]): unknown {
  if (value instanceof PathRef) {
    const { path, intent } = backendPathOf(value.target, state);
    intents.push(intent);
    return path;
  }
  if (Array.isArray(value)) return value.map((v) => resolveJson(v, state, intents));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveJson(v, state, intents)]));
  return value;
}

function longestString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return null;
  let best: string | null = null;
  for (const v of Object.values(value)) {
    const s = longestString(v);
    if (s !== null && (best === null || s.length > best.length)) best = s;
  }
  return best;
}

function queryText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return JSON.stringify(value);
}

const BOUNDARY = 'fuzzboundary7MA4YWxkTrZu0gW';

/** `text` as a quoted-string of a header parameter, backslash and double quote escaped (RFC 9110 quoted-pair). */
function quoted(text: string): string {
  return `"${text.replace(/[\\"]/g, '\\$&')}"`;
}

function multipartBody(b: Extract<BodyPlan, { kind: 'multipart' }>): Buffer {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name=${quoted(b.field)}; filename=${quoted(b.filename)}\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = b.boundary === 'unterminated' ? '' : `\r\n--${BOUNDARY}--\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(b.bytes), Buffer.from(tail)]);
}

function authHeader(auth: AuthPlan, creds: Credentials, fresh: string | null): { value: string | null; shown: string } {
  switch (auth) {
    case 'user': return fresh ? { value: fresh, shown: 'Bearer $FRESH_ALICE_TOKEN' } : { value: creds.user, shown: 'Bearer $ALICE_TOKEN' };
    case 'other-user': return { value: creds.otherUser, shown: 'Bearer $BOB_TOKEN' };
    case 'revoked': return { value: creds.revoked, shown: 'Bearer $REVOKED_TOKEN' };
    case 'issuer': return { value: creds.issuer, shown: 'Bearer $CA_ISSUER_SECRET' };
    case 'garbage': return { value: 'Bearer not-a-token.0123', shown: 'Bearer not-a-token.0123' };
    case 'malformed': return { value: 'Basic YWxpY2U6cHctYWxpY2U=', shown: 'Basic YWxpY2U6cHctYWxpY2U=' };
    case 'none': return { value: null, shown: '' };
  }
}

/**
 * Turns a plan into the request to send, against the scenario's current state. `POST
 * /auth/logout` and `POST /auth/signout` with the user's credential get a fresh login, so that
 * the scenario's token stays valid for the steps after it.
 */
export async function resolvePlan(plan: RequestPlan, op: Operation, state: ScenarioState, creds: Credentials): Promise<ResolvedRequest> {
  const { url, intent: targetIntent, isCollection } = urlOf(op.template, plan.target, state);
  const query = plan.query.map(([k, v]) => `${encodeWtf8(k)}=${encodeWtf8(queryText(v))}`).join('&');
  const headers: Record<string, string> = {};
  const redacted: Record<string, string> = {};
  const fresh = plan.auth === 'user' && (op.id === 'POST /auth/logout' || op.id === 'POST /auth/signout') ? await creds.fresh() : null;
  const auth = authHeader(plan.auth, creds, fresh);
  if (auth.value) {
    headers.authorization = auth.value;
    redacted.authorization = auth.shown;
  }
  let body: Buffer | null = null;
  // A rename makes nothing at its target path: its intent is the new name (set below).
  let intent = op.method === 'PATCH' ? null : targetIntent;
  let malformedBody = false;
  let renames: string | null = null;
  const b = plan.body;
  switch (b.kind) {
    case 'none':
      break;
    case 'json': {
      const intents: ResolvedRequest['intent'][] = [];
      const value = resolveJson(b.value, state, intents);
      const text = JSON.stringify(value) ?? 'null';
      intent = intents[0] ?? intent;
      const { newname, destination } = (value ?? {}) as { newname?: unknown; destination?: unknown };
      if (op.method === 'PATCH' && plan.target?.kind === 'existing' && (typeof newname === 'string' || typeof destination === 'string')) {
        renames = pick(state.entities, plan.target.pick)!.path;
        // NOTE: with a destination the entity moves into that collection, keeping its name unless newname is given.
        intent = {
          parent: typeof destination === 'string' ? destination : parentPathOf(renames),
          name: typeof newname === 'string' ? newname : renames.slice(renames.lastIndexOf('/') + 1),
        };
      }
      headers['content-type'] = b.mediaType;
      if (b.damage === 'none') body = Buffer.from(text, 'utf8');
      else if (b.damage === 'empty') body = Buffer.alloc(0);
      else if (b.damage === 'truncated') body = Buffer.from(text.slice(0, Math.max(1, text.length - 2)), 'utf8');
      else {
        // Invalid UTF-8 at the end of the longest string (a path or a name, where a lenient
        // decoder's U+FFFD would be stored): a lone continuation byte and an overlong `/`.
        const longest = JSON.stringify(longestString(value) ?? '');
        const at = text.indexOf(longest) + longest.length - 1;
        body = Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), Buffer.from([0x80, 0xc0, 0xaf]), Buffer.from(text.slice(at), 'utf8')]);
      }
      malformedBody = b.damage !== 'none';
      // A damaged body asks for nothing in particular: what a lenient server makes of it is
      // the malformed-body property's business.
      if (malformedBody) intent = null;
      break;
    }
    case 'urlencoded': {
      const intents: ResolvedRequest['intent'][] = [];
      const value = resolveJson(b.value, state, intents);
      const pairs = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [['value', value]];
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = Buffer.from(pairs.map(([k, v]) => `${encodeWtf8(String(k))}=${encodeWtf8(queryText(v))}`).join('&'));
      break;
    }
    case 'octets':
      if (b.contentType) headers['content-type'] = b.contentType;
      body = Buffer.from(b.bytes);
      break;
    case 'multipart':
      headers['content-type'] = b.boundary === 'missing' ? 'multipart/form-data' : `multipart/form-data; boundary=${BOUNDARY}`;
      body = multipartBody(b);
      // A form sent to a collection creates the file under the form's file name inside it. The
      // name is what the wire carries (UTF-8 turns lone surrogates into U+FFFD); a name with a
      // line break has no spelling in a quoted-string.
      if (plan.target?.kind === 'existing' && (isCollection || plan.target.trailingSlash)) {
        intent = /[\r\n]/.test(b.filename) ? null : { parent: pick(state.entities, plan.target.pick)!.path, name: b.filename.toWellFormed() };
      } else if (plan.target?.kind === 'new' && plan.target.trailingSlash) intent = null;
      break;
    case 'text':
      headers['content-type'] = b.contentType;
      body = Buffer.from(b.text, 'utf8');
      break;
    case 'csr':
      headers['content-type'] = b.contentType;
      body = Buffer.from(creds.csr, 'utf8');
      break;
  }
  return { request: { method: op.method, target: query ? `${url}?${query}` : url, headers, body, redacted }, intent, renames, malformedBody };
}

