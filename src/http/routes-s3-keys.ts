/**
 * The caller's S3 access keys over the API (`/api/s3/keys`): make one (its secret shown once),
 * list them, revoke one. Routes translate HTTP to the core's `S3Keys` and back; the S3
 * protocol itself is served by `src/s3/` on its own listener.
 */
import type { FastifyRequest } from 'fastify';
import type { Backend } from '../core/backend.ts';
import { MAX_S3_KEY_LABEL, type S3KeyView, type S3Keys } from '../core/s3-keys.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { envelope } from './envelope.ts';
import { Envelope, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface S3KeyRouteDeps {
  backend: Backend;
  s3Keys: S3Keys;
  authenticate: Authenticate;
}

const KEYS = '/api/s3/keys';

const S3KeyRecord = Type.Object({
  access_key_id: Type.String({ description: 'The access key id (AWS_ACCESS_KEY_ID); it also names the key in DELETE /api/s3/keys/{id}.' }),
  label: Type.Union([Type.String(), Type.Null()], { description: 'What the key was called when made; null when not said.' }),
  created_at: Type.String({ format: 'date-time', description: 'When it was made.' }),
});

const KEY_EXAMPLE = { access_key_id: 'LKQ3ZB7XW2MV5TNP4K6R', label: 'laptop rclone', created_at: '2026-11-27T12:00:00.000Z' };

const S3KeyList = Envelope(Type.Array(S3KeyRecord, { examples: [[KEY_EXAMPLE]] }), 'Your S3 keys, oldest first (the secrets are never shown again).');

const CreatedS3Key = Envelope(Type.Object({
  ...S3KeyRecord.properties,
  secret_access_key: Type.String({ description: 'The secret access key (AWS_SECRET_ACCESS_KEY): shown only here. lading keeps it sealed under its master key, as signatures are checked with it.' }),
}, { examples: [{ ...KEY_EXAMPLE, secret_access_key: 'Zq1n…' }] }), 'The new S3 key.');

const CreateS3KeyBody = Type.Object({
  label: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_S3_KEY_LABEL, description: `What the key is for, to recognise it in the list: 1 to ${MAX_S3_KEY_LABEL} characters.` })),
}, { additionalProperties: false, examples: [{ label: 'laptop rclone' }] });

const S3KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9]+$' }) });

const Completed = Envelope(Type.Object({ Completed: Type.String() }), 'Done.');

function keyRecord(key: S3KeyView) {
  return { access_key_id: key.id, label: key.label, created_at: key.createdAt.toISOString() };
}

export function registerS3KeyRoutes(app: TypedApp, deps: S3KeyRouteDeps): void {
  const common = { tags: ['s3'], security: [{ bearer: [] }, { session: [] }] as Record<string, string[]>[] };
  const actorOf = async (request: FastifyRequest) => {
    await deps.authenticate(request);
    return deps.backend.actorOf(request.auth!.credential, viaOf(request));
  };

  app.get(KEYS, {
    schema: { ...common, operationId: 'listS3Keys', summary: 'List your S3 access keys (not their secrets)', response: { 200: S3KeyList, ...errorResponses(401) } },
  }, async (request) => envelope((await deps.s3Keys.list(await actorOf(request))).map(keyRecord)));

  app.post(KEYS, {
    schema: {
      ...common,
      operationId: 'createS3Key',
      summary: 'Make an S3 access key pair (the secret is shown once) for S3 clients: aws, boto3, rclone, s3cmd',
      description: 'The pair signs requests (AWS Signature Version 4) to the S3 listener (s3.listen), where the bucket named after you is your home. Revoke it with DELETE /api/s3/keys/{id}. At most 20 keys per user (429 beyond). With the cookie, send X-CSRF-Token.',
      body: CreateS3KeyBody,
      response: { 201: CreatedS3Key, ...errorResponses(401, 403, 413, 415, 429) },
    },
    links: { 201: { Revoke: { operationId: 'revokeS3Key', parameters: { id: '$response.body#/Response/data/access_key_id' }, description: 'Revoke the key.' } } },
  }, async (request, reply) => {
    const actor = await actorOf(request);
    const made = await deps.s3Keys.create(actor, request.body.label ?? null);
    request.log.info({ user: actor.user, s3Key: made.id }, 'S3 key made');
    reply.code(201);
    return envelope({ ...keyRecord(made), secret_access_key: made.secret }, 201);
  });

  app.delete(`${KEYS}/:id`, {
    schema: {
      ...common,
      operationId: 'revokeS3Key',
      summary: 'Revoke one of your S3 keys: refused from the next request on, on every node',
      description: 'With the cookie, send X-CSRF-Token. 404 when you have no key with this id.',
      params: S3KeyParams,
      response: { 200: Completed, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    await deps.s3Keys.revoke(actor, request.params.id);
    request.log.info({ user: actor.user, s3Key: request.params.id }, 'S3 key revoked');
    return envelope({ Completed: 'The S3 key was revoked.' });
  });
}
