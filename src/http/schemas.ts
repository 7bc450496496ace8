/**
 * JSON schemas (TypeBox) of every request and response, and the Fastify instance type that
 * derives handler types from them. The same objects validate requests, type the handlers'
 * `query`, `params` and `body`, serialise responses (so no field can leak) and generate the
 * OpenAPI document at /api/specs; no handler restates a request's shape by hand.
 */
import type {
  FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from './typebox.ts';
import type { Static, TSchema } from '@sinclair/typebox';
import { REFUSED_IN_NAMES, STORED_NAME_PATTERN } from '../core/path.ts';
import { entityParams } from './target.ts';

/** The application as routes see it: handlers get requests typed by their route's schemas. */
export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

const TRUE_FLAGS = ['true', 'True', 'TRUE', '1', 'yes', ''] as const;
const FALSE_FLAGS = ['false', 'False', 'FALSE', '0', 'no'] as const;

/** Boolean query flags as clients of the original service send them (`true`, `True`, `1`, …). */
export const Flag = Type.Union(
  [...TRUE_FLAGS, ...FALSE_FLAGS].map((v) => Type.Literal(v)),
  { description: 'Boolean flag: true/false (also True/False, 1/0, yes/no; an empty value means true).' },
);

/**
 * A flag sent where no schema validates it (a multipart form field): the `Flag` spellings in
 * any case; null when `text` is none of them.
 */
export function flagValue(text: string): boolean | null {
  const lower = text.toLowerCase();
  if (TRUE_FLAGS.some((value) => value.toLowerCase() === lower)) return true;
  if (FALSE_FLAGS.some((value) => value.toLowerCase() === lower)) return false;
  return null;
}

/** Whether a validated `Flag` (absent: false) says true. */
export function isSet(flag: Static<typeof Flag> | undefined): boolean {
  return TRUE_FLAGS.some((value) => value === flag);
}

const ErrorItem = Type.Record(Type.String(), Type.String(), { description: '{title: message}' });

const Meta = Type.Object({
  data_type: Type.String({ examples: ["<class 'list'>"] }),
  elements: Type.Integer(),
  errors: Type.Integer(),
  status: Type.Integer(),
});

/** The envelope of spec 2.1 around `data`. */
export function Envelope<T extends TSchema>(data: T, description: string) {
  return Type.Object({
    Meta,
    Response: Type.Object({ data, errors: Type.Union([Type.Null(), Type.Array(ErrorItem)]) }),
  }, { description });
}

/** The envelope around a page of `item`s; `Meta.continuation_token` is the next page's `after`. */
export function PagedEnvelope<T extends TSchema>(item: T, description: string) {
  const listed = Envelope(Type.Array(item), description);
  return Type.Object({
    Meta: Type.Object({
      ...listed.properties.Meta.properties,
      continuation_token: Type.Union([Type.String(), Type.Null()], { description: 'Pass it as `after` for the next page; null on the last page.' }),
    }),
    Response: listed.properties.Response,
  }, { description });
}

export const ErrorEnvelope = Envelope(Type.Null(), 'Error: Response.errors lists {title: message} objects.');

export const EntityRecord = Type.Object({
  dataobject: Type.String(),
  link: Type.String(),
  location: Type.String(),
  metadata: Type.Object({
    PID: Type.Union([Type.String(), Type.Null()]),
    checksum: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    object_type: Type.Union([Type.Literal('dataobject'), Type.Literal('collection')]),
    size: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Bytes of a data object; null for a collection. (Not in spec 2.2: added for listings in long format.)' }),
    modified: Type.String({ format: 'date-time', description: 'When the entity last changed: its content, name or metadata. (Not in spec 2.2.)' }),
    owner: Type.String({ description: 'The user who owns the entity. (Not in spec 2.2: added for file browsers.)' }),
    published: Type.Optional(Type.Boolean({ description: 'With marks=true, to a caller holding own on the collection: anyone may read it without signing in (/api/public). (Not in spec 2.2.)' })),
    shared: Type.Optional(Type.Boolean({ description: 'With marks=true, to an owner: users or groups other than its owner hold access entries on it. (Not in spec 2.2.)' })),
    share_links: Type.Optional(Type.Boolean({ description: 'With marks=true, to an owner: a share link on it works now. (Not in spec 2.2.)' })),
  }),
  path: Type.String(),
});

// NOTE: the key of a record is the entity's name. Its pattern is the one `core/path.ts` derives
// from the name rule: `Type.String()` alone would give `^(.*)$`, which does not match a name
// holding U+2028 or U+2029, and the serializer drops keys that miss their pattern.
const EntityName = Type.String({ pattern: STORED_NAME_PATTERN });

export const EntityList = Type.Object({
  Meta: Type.Object({
    ...Meta.properties,
    continuation_token: Type.Optional(Type.Union([Type.String(), Type.Null()], {
      description: 'Only with max_keys: pass it as continuation_token for the next page; null after the last one.',
    })),
  }),
  Response: Type.Object({ data: Type.Array(Type.Record(EntityName, EntityRecord)), errors: Type.Union([Type.Null(), Type.Array(ErrorItem)]) }),
}, {
  description: 'Entity records (spec 2.2): one for a data object, one per child for a collection. A listing is streamed as it is read, in byte order of the names; its Meta follows its data.',
});

/** The most entities `GET /api/access/shared-with-me` answers (`SHARED_WITH_ME_MAX` of the core). */
const SHARED_MAX_TEXT = '1,000';

const SHARED_EXAMPLE = {
  survey: {
    dataobject: 'survey',
    link: 'https://staging.example.org/api/registered/lading/home/alice/survey',
    location: 'lading://storage.example.org/lading/home/alice/survey',
    metadata: { PID: null, checksum: null, name: 'survey', object_type: 'collection', size: null, modified: '2026-11-23T08:00:00.000Z' },
    path: '/lading/home/alice',
    access: 'write',
  },
};

export const SharedList = Type.Object({
  Meta: Type.Object({
    ...Meta.properties,
    truncated: Type.Boolean({ description: `True when more than ${SHARED_MAX_TEXT} entities are shared with the caller: the answer holds the first ${SHARED_MAX_TEXT} by path.` }),
  }),
  Response: Type.Object({
    data: Type.Array(Type.Record(EntityName, Type.Object({
      ...EntityRecord.properties,
      access: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('own')], {
        description: 'The caller\'s access to the entity (and what lies below it): the highest level held by the caller, their groups, public, here or on a collection above. (Not in spec 2.2.)',
      }),
    })), { examples: [[SHARED_EXAMPLE]] }),
    errors: Type.Union([Type.Null(), Type.Array(ErrorItem)]),
  }),
}, {
  description: `Entity records (spec 2.2, as in a listing) of what is shared with the caller, sorted by path in byte order, each with the caller's access; at most ${SHARED_MAX_TEXT}.`,
});

export const UploadResult = Envelope(Type.Object({
  PID: Type.Union([Type.String(), Type.Null()]),
  checksum: Type.String(),
  filename: Type.String(),
  link: Type.String(),
  location: Type.String(),
  path: Type.String(),
}), 'Upload result (spec 2.3).');

export const CollectionResult = Envelope(Type.Object({
  link: Type.String(), location: Type.String(), path: Type.String(),
}), 'Directory creation result (spec 2.4).');

export const RenameResult = Envelope(Type.Object({
  filename: Type.String(), link: Type.String(), location: Type.String(), path: Type.String(),
}), 'Rename result (spec 2.5).');

export const CopyResult = Envelope(Type.Object({
  filename: Type.String(), link: Type.String(), location: Type.String(), path: Type.String(),
}), 'Copy result: where the copy is, as in a rename result (path is its collection).');

export const AuthResult = Envelope(Type.Object({
  storage_home: Type.String(), storage_user: Type.String(), token: Type.String(),
}), 'Authentication result (spec 2.6).');

export const ProxyResult = Envelope(Type.Object({ Completed: Type.String() }), 'Proxy refresh result (spec 2.7).');

export const ProxyStateResult = Envelope(Type.Object({
  subject: Type.String({ description: 'Distinguished name the backend sees (the proxy certificate\'s subject).' }),
  issuer: Type.Union([Type.String(), Type.Null()], { description: 'Issuer of the proxy certificate; null when the credential is not a certificate.' }),
  not_before: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Start of validity.' }),
  not_after: Type.String({ format: 'date-time', description: 'End of validity (of the proxy or the user certificate behind it, whichever ends first).' }),
  seconds_left: Type.Integer({ minimum: 0, description: 'Seconds until not_after; 0 once expired.' }),
  expired: Type.Boolean({ description: 'True once not_after has passed: POST /auth/proxy issues a new one.' }),
  storage_user: Type.String({ description: 'The user the token belongs to.' }),
  storage_home: Type.String({ description: 'That user\'s home collection.' }),
}, {
  examples: [{
    subject: 'CN=alice,O=lading,CN=1234567890', issuer: 'CN=alice,O=lading', not_before: '2026-11-23T08:00:00.000Z', not_after: '2026-11-23T20:00:00.000Z',
    seconds_left: 43140, expired: false, storage_user: 'alice', storage_home: '/lading/home/alice',
  }],
}), 'The state of the caller\'s proxy certificate.');

export const ExchangeBody = Type.Object({
  access_token: Type.String({ minLength: 1, maxLength: 16384, description: 'An access token the server\'s identity provider issued for lading (as GET /auth/clients/cli describes).' }),
});

export const CliClientResult = Envelope(Type.Object({
  issuer: Type.String({ description: 'The identity provider.' }),
  device_authorization_endpoint: Type.Union([Type.String(), Type.Null()], { description: 'RFC 8628 device authorization endpoint; null when the provider offers none.' }),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.Union([Type.String(), Type.Null()], { description: 'RFC 7009 revocation endpoint, for refresh tokens at logout; null when none.' }),
  client_id: Type.String({ description: 'The command line\'s public client id (no secret).' }),
  scopes: Type.String({ description: 'Scopes to request, space-separated.' }),
  token_ttl: Type.Integer({ description: 'Lifetime of the lading tokens POST /auth/exchange issues, in seconds.' }),
  local_accounts: Type.Boolean({ description: 'True when the provider is the embedded one, on lading\'s local accounts: POST /auth/login works too.' }),
}, {
  examples: [{
    issuer: 'https://staging.example.org/oidc', device_authorization_endpoint: 'https://staging.example.org/oidc/device/auth',
    token_endpoint: 'https://staging.example.org/oidc/token', revocation_endpoint: 'https://staging.example.org/oidc/token/revocation',
    client_id: 'lading-cli', scopes: 'openid profile offline_access', token_ttl: 86400, local_accounts: true,
  }],
}), 'How the lading command line logs in at the server\'s identity provider.');

export const StatusResult = Envelope(Type.String(), 'Liveness.');

export const ReadyResult = Envelope(Type.Literal('ready'), 'Readiness: the catalog and the store answer.');

export const ValidatedResult = Envelope(Type.Literal('validated'), 'The token is valid.');

/** The bytes of a data object (a download, or a raw upload's body). */
export const Bytes = Type.String({ format: 'binary', description: 'The bytes of the data object.' });

/** A PEM text (certificate or certificate signing request). */
export const Pem = Type.String({ description: 'PEM text.' });

/** The path below `/api/registered` that a route's wildcard names. */
export const RegisteredParams = entityParams('/api/registered');

/** The PID a route's wildcard names. */
export const PidParams = Type.Object({
  '*': Type.String({ description: 'A PID, <prefix>/<suffix> (percent-encoded as a path).' }),
});

/** The paging of a collection's listing. */
export const ListQuery = Type.Object({
  max_keys: Type.Optional(Type.String({
    pattern: '^(10000|[1-9][0-9]{0,3})$', examples: ['1000'],
    description: 'Listing a collection: answer at most this many entries (1 to 10000), and in `Meta.continuation_token` where the next page starts (null after the last page). Without it the whole listing is streamed.',
  })),
  continuation_token: Type.Optional(Type.String({
    minLength: 1, maxLength: 2048,
    description: 'Listing a collection: start after the entries of the page whose `Meta.continuation_token` this is.',
  })),
  marks: Type.Optional(Type.String({
    enum: ['true', 'false'],
    description: 'Listing a collection you own: give each entry `metadata.published`, `shared` and `share_links` (how far it is open to others). Costs one more catalog read a page; ignored without own on the collection.',
  })),
}, { additionalProperties: true });

/** `download`: a flag (the bytes of a data object), or `zip` / `bag` (a collection as one archive). */
export const Download = Type.Union([
  ...Flag.anyOf,
  Type.Literal('zip', { description: 'A collection as one ZIP archive.' }),
  Type.Literal('bag', { description: 'A collection as a BagIt bag (RFC 8493) in a ZIP archive.' }),
], { description: 'true (also True, 1, yes, or empty) for the bytes of a data object; zip for a collection as one ZIP archive (stored, Zip64, UTF-8 names); bag for a collection as a BagIt bag (RFC 8493) in a ZIP archive.' });

export const GetQuery = Type.Object({
  download: Type.Optional(Download),
  ...ListQuery.properties,
}, { additionalProperties: true });

export const PutQuery = Type.Object({
  force: Type.Optional(Flag),
  pid_await: Type.Optional(Flag),
}, { additionalProperties: true });

export const CreateBody = Type.Object({
  path: Type.String({ minLength: 1, description: 'Absolute path of the collection to create.' }),
  force: Type.Optional(Type.Union([Type.Boolean(), Flag], { description: 'Create missing parents; no error when it exists.' })),
});

const NewName = Type.String({ minLength: 1, description: `New name: no '/', not '.' or '..', at most 255 UTF-8 bytes, none of ${REFUSED_IN_NAMES}.` });
const ReplaceFlag = Type.Union([Type.Boolean(), Flag], {
  description: 'Replace a data object standing at the target (never a collection); without it an existing target is refused with 409.',
});

export const RenameBody = Type.Object({
  newname: Type.Optional(NewName),
  destination: Type.Optional(Type.String({
    minLength: 1,
    description: 'Absolute path of an existing collection to move the entity into, keeping its name or taking newname; a collection\'s whole subtree follows. Needs write on the collection left, on this one and on the entity. Without it, newname renames in place (spec 4.6).',
  })),
  force: Type.Optional(ReplaceFlag),
}, { description: 'newname renames in place; destination (with or without newname) moves. At least one of the two.' });

export const CopyBody = Type.Object({
  copy_to: Type.String({
    minLength: 1,
    description: 'Absolute path of an existing collection to copy the entity into; the copy keeps the name or takes newname. A collection is copied with everything in it.',
  }),
  newname: Type.Optional(NewName),
  force: Type.Optional(ReplaceFlag),
});

export const CopyQuery = Type.Object({
  pid_await: Type.Optional(Flag),
}, { additionalProperties: true });

const AccessLevelSchema = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('own')], {
  description: 'read: read and list; write: also upload, create, rename and set metadata; own: also change the access list and publish.',
});

const AclEntry = Type.Object({
  principal: Type.String({ description: 'A user, an administrator, a group, `public` (every signed-in user) or `anonymous` (anyone: the entity is published).' }),
  level: AccessLevelSchema,
});

const ACL_EXAMPLE = {
  path: '/lading/home/alice/campaign-2026',
  owner: 'alice',
  entries: [{ principal: 'alice', level: 'own' }, { principal: 'bob', level: 'read' }],
  inherited: [{ principal: 'alice', level: 'own', from: '/lading/home/alice' }],
};

export const AclResult = Envelope(Type.Object({
  path: Type.String({ description: 'The entity.' }),
  owner: Type.String({ description: 'The user who created it.' }),
  entries: Type.Array(AclEntry, { description: 'Entries set on the entity itself.' }),
  inherited: Type.Array(Type.Object({
    principal: AclEntry.properties.principal,
    level: AccessLevelSchema,
    from: Type.String({ description: 'The collection above the entity that the entry is set on; it covers everything below it.' }),
  }), { description: 'Entries inherited from the collections above it, nearest first.' }),
}, { examples: [ACL_EXAMPLE] }), 'The access list of an entity: its owner, its own entries and those it inherits.');

export const AclGrantBody = Type.Object({
  principal: Type.String({ minLength: 1, maxLength: 64, description: 'A user, an administrator, a group, or `public` (every signed-in user). Not `anonymous`: publish instead.' }),
  level: AccessLevelSchema,
}, { examples: [{ principal: 'bob', level: 'read' }, { principal: 'public', level: 'read' }, { principal: 'team-ocean', level: 'write' }] });

export const AclRevokeQuery = Type.Object({
  principal: Type.String({ minLength: 1, description: 'The principal whose entry on the entity itself is removed.', examples: ['bob'] }),
}, { additionalProperties: true });

const AvuSchema = Type.Object({
  attribute: Type.String(),
  value: Type.String(),
  unit: Type.String({ description: 'Empty when none was given.' }),
});

export const MetadataResult = Envelope(Type.Array(AvuSchema, {
  examples: [[{ attribute: 'PID', value: '21.T99999/5f0c…', unit: '' }, { attribute: 'depth', value: '1200', unit: 'm' }]],
}), 'The attribute–value–unit metadata of an entity, sorted by attribute, value and unit.');

export const AvuBody = Type.Object({
  attribute: Type.String({ minLength: 1, maxLength: 2700, description: 'At most 2,700 bytes (UTF-8), no control characters; not `PID` nor `EUDAT/…`, which the PID rules write.' }),
  value: Type.String({ minLength: 1, maxLength: 2700, description: 'At most 2,700 bytes (UTF-8).' }),
  unit: Type.Optional(Type.String({ maxLength: 2700, description: 'At most 2,700 bytes (UTF-8); empty by default.' })),
}, { examples: [{ attribute: 'depth', value: '1200', unit: 'm' }, { attribute: 'instrument', value: 'CTD SBE 911plus' }] });

export const MetadataDeleteQuery = Type.Object({
  attribute: Type.String({ minLength: 1, description: 'Remove the AVUs with this attribute …', examples: ['depth'] }),
  value: Type.Optional(Type.String({ description: '… and, when given, only those with this value (whatever their unit).', examples: ['1200'] })),
}, { additionalProperties: true });

export const PublicationResult = Envelope(Type.Object({
  path: Type.String({ description: 'The entity.' }),
  published: Type.Boolean({ description: 'Anyone may read it without a token, at public_url.' }),
  via: Type.Union([Type.String(), Type.Null()], { description: 'The published entity that makes it public: itself, or a collection above it; null when not published.' }),
  published_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When `via` was published.' }),
  published_by: Type.Union([Type.String(), Type.Null()], { description: 'Who published `via`.' }),
  public_url: Type.Union([Type.String(), Type.Null()], { description: 'Where anyone reads it (add ?download=true for the bytes); null when not published.' }),
}, {
  examples: [{
    path: '/lading/home/alice/campaign-2026', published: true, via: '/lading/home/alice/campaign-2026',
    published_at: '2026-11-23T12:00:00.000Z', published_by: 'alice', public_url: 'https://staging.example.org/api/public/lading/home/alice/campaign-2026',
  }],
}), 'Whether an entity is published, since when and by whom.');

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1 }),
  password: Type.String({ minLength: 1 }),
});

/** The 4xx statuses a route may document; each is a code's status in `errors.ts`. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 412 | 413 | 414 | 415 | 416 | 429 | 431 | 460;

/** What any request may get before it reaches its route: malformed (400), stalled (408), a head too large (431). */
type Refusal = 400 | 408 | 431;

const HtmlPage = Type.String({ description: 'An HTML page, for clients that prefer text/html to JSON (browsers).' });

/** An error answered as the envelope, or as an HTML page to a client that prefers text/html (a browser). */
export function envelopeOrPage(description: string) {
  return { description, content: { 'application/json': { schema: ErrorEnvelope }, 'text/html': { schema: HtmlPage } } };
}

/**
 * The error responses of a route: those any request may get before it is routed (400 for a
 * malformed request or a bad Host header, 408 when it stalls, 431 when its head is too large),
 * the other 4xx statuses `statuses` names, and any 5xx; all JSON error envelopes.
 */
export function errorResponses<S extends ErrorStatus = never>(...statuses: S[]): Record<Refusal | S, typeof ErrorEnvelope> & { '5xx': typeof ErrorEnvelope } {
  const out: Record<string, typeof ErrorEnvelope> = { 400: ErrorEnvelope, 408: ErrorEnvelope, 431: ErrorEnvelope };
  for (const status of statuses) out[status] = ErrorEnvelope;
  out['5xx'] = ErrorEnvelope;
  return out as Record<Refusal | S, typeof ErrorEnvelope> & { '5xx': typeof ErrorEnvelope };
}
