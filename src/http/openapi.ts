/**
 * The options of the OpenAPI document at /api/specs: its description, its tags, and the two
 * things route schemas cannot say by themselves (the bodies that routes stream instead of
 * parsing, and HEAD answers having no body). Everything else comes from the route schemas;
 * this module declares no route.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { Type } from './typebox.ts';
import type { TSchema } from '@sinclair/typebox';
import { Bytes, Pem } from './schemas.ts';

/** Every tag routes use, with what it groups. */
export const TAGS = [
  { name: 'registered', description: 'Data objects and collections in the registered domain: metadata, listing, download, upload, collection creation, rename.' },
  { name: 'auth', description: 'Login (local credentials or the identity provider), token check, proxy regeneration, logout; browser sign-in with a session cookie, and the user\'s API tokens.' },
  { name: 'access', description: 'Access lists: who may read, write or own an entity (users, groups, public), for its owners.' },
  { name: 'metadata', description: 'Attribute–value–unit metadata of entities: read with read access, changed with write access.' },
  { name: 'publishing', description: 'Publishing data to anyone without a token, and reading published data at /api/public.' },
  { name: 'shares', description: 'Share links and drop boxes: owners create, list and revoke them (bearer token); anyone holding a link downloads or lists what it shares, or deposits files into a drop box, without an account (/api/shared, HTTP Basic for a link\'s password).' },
  { name: 'admin', description: 'For administrators: the audit trail of security-relevant and data-changing events, hash-chained so an edit shows (lading audit verify).' },
  { name: 's3', description: 'Your S3 access keys: the key pairs S3 clients (aws, boto3, rclone, s3cmd) sign with at the S3 listener (s3.listen), where your bucket is your home; made (the secret shown once), listed and revoked here.' },
  { name: 'quota', description: 'Quotas: the bytes and data objects a user\'s home or a collection may hold (set by the operators), and what they hold now, the trash included.' },
  { name: 'search', description: 'Search across collections, by name, metadata and type, among what the caller may read; and the caller\'s latest uploads.' },
  { name: 'trash', description: 'The trash: owners move data objects and collections to it (they leave every read path at once, keeping bytes, access lists, metadata and PID, which resolves to a tombstone), list it, restore from it, purge one entry or empty it; what stays longer than trash.retention is purged.' },
  { name: 'uploads', description: 'Resumable uploads in the tus 1.0 protocol (creation, creation-with-upload, creation-defer-length, termination, checksum, expiration), and the state of each.' },
  { name: 'pids', description: 'Resolution of persistent identifiers registered by the backend\'s rules.' },
  { name: 'ca', description: 'The online certificate authority: the CA certificate, and user certificates for the issuer credential.' },
  { name: 'status', description: 'Liveness and readiness.' },
  { name: 'web', description: 'The web app for browsers: its page at / and its script and stylesheet under /app/. It uses the same public API as every client.' },
] as const;

/**
 * Bodies a route reads itself (declared by its schema's `consumes`, with no `body` schema,
 * because validating would buffer them): what each media type carries.
 */
const STREAMED_BODIES: Record<string, TSchema> = {
  'application/octet-stream': Bytes,
  'application/offset+octet-stream': Type.String({ format: 'binary', description: 'The bytes to append, from Upload-Offset on.' }),
  'multipart/form-data': Type.Object({ file: Bytes }, { description: 'A form whose field `file` holds the data object.' }),
  'application/pkcs10': Type.String({ description: 'A PEM certificate signing request.' }),
  'application/x-pem-file': Pem,
};

type Operation = { operationId?: string; responses?: Record<string, { content?: unknown }> };

/** HEAD answers as GET does, without a body: the document says so, under its own operation id. */
function headWithoutBody(document: { paths?: Record<string, Record<string, Operation>> }): void {
  for (const item of Object.values(document.paths ?? {})) {
    const head = item.head;
    if (!head) continue;
    const copy: Operation = structuredClone(head);
    if (copy.operationId) copy.operationId = `${copy.operationId}Head`;
    for (const response of Object.values(copy.responses ?? {})) delete response.content;
    item.head = copy;
  }
}

/** The options `@fastify/swagger` is registered with. */
export function openapiOptions(version: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'lading data-staging API',
        version,
        description: 'Upload, download, list, create and rename data in a storage backend whose rules assign persistent identifiers. Compatible with the EUDAT B2STAGE HTTP API.',
      },
      tags: TAGS.map((t) => ({ ...t })),
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, session: { type: 'apiKey', in: 'cookie', name: 'lading_session', description: 'The browser session cookie set by /auth/signin (`__Host-lading_session` on https). Every route that takes a bearer token takes it when no Authorization header is sent; a request that changes something also needs X-CSRF-Token (GET /auth/session) and must be same-origin.' }, sharePassword: { type: 'http', scheme: 'basic', description: 'The password of a password-protected share link, with any user name.' } } },
    },
    transform: ({ schema, url }) => {
      if (!schema?.consumes || schema.body) return { schema, url };
      const content = Object.fromEntries(schema.consumes.map((type) => [type, { schema: STREAMED_BODIES[type] ?? Bytes }]));
      return { schema: { ...schema, body: { content } }, url };
    },
    transformObject: (documents) => {
      const document = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      headWithoutBody(document as Parameters<typeof headWithoutBody>[0]);
      return document;
    },
  };
}
