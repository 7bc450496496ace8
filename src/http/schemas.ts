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
import { type Static, Type, type TSchema } from '@sinclair/typebox';

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
  }),
  path: Type.String(),
});

export const EntityList = Envelope(
  Type.Array(Type.Record(Type.String(), EntityRecord)),
  'Entity records (spec 2.2): one for a data object, one per child for a collection.',
);

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

export const AuthResult = Envelope(Type.Object({
  storage_home: Type.String(), storage_user: Type.String(), token: Type.String(),
}), 'Authentication result (spec 2.6).');

export const ProxyResult = Envelope(Type.Object({ Completed: Type.String() }), 'Proxy refresh result (spec 2.7).');

export const StatusResult = Envelope(Type.String(), 'Liveness.');

export const GetQuery = Type.Object({
  download: Type.Optional(Flag),
}, { additionalProperties: true });

export const PutQuery = Type.Object({
  force: Type.Optional(Flag),
  pid_await: Type.Optional(Flag),
}, { additionalProperties: true });

export const CreateBody = Type.Object({
  path: Type.String({ minLength: 1, description: 'Absolute path of the collection to create.' }),
  force: Type.Optional(Type.Union([Type.Boolean(), Flag], { description: 'Create missing parents; no error when it exists.' })),
});

export const RenameBody = Type.Object({
  newname: Type.String({ minLength: 1, description: 'New name (no \'/\').' }),
});

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1 }),
  password: Type.String({ minLength: 1 }),
});

/** Responses every route may give besides its success. */
export const errorResponses = {
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
};
