/**
 * JSON schemas (TypeBox) of every request and response. The same objects validate requests,
 * serialise responses (so no field can leak) and generate the OpenAPI document at /api/specs.
 */
import { Type, type TSchema } from '@sinclair/typebox';

/** Boolean query flags as clients of the original service send them (`true`, `True`, `1`, …). */
export const Flag = Type.Union(
  ['true', 'True', 'TRUE', '1', 'yes', '', 'false', 'False', 'FALSE', '0', 'no'].map((v) => Type.Literal(v)),
  { description: 'Boolean flag: true/false (also True/False, 1/0, yes/no; an empty value means true).' },
);

export function isSet(flag: string | undefined): boolean {
  return flag !== undefined && ['true', 'True', 'TRUE', '1', 'yes', ''].includes(flag);
}

const ErrorItem = Type.Record(Type.String(), Type.String(), { description: '{title: message}' });

const Meta = Type.Object({
  data_type: Type.String({ examples: ["<class 'list'>"] }),
  elements: Type.Integer(),
  errors: Type.Integer(),
  status: Type.Integer(),
});

/** The envelope of spec 2.1 around `data`. */
export function Envelope(data: TSchema, description: string) {
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
