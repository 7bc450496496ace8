/**
 * The audit trail over the API (`GET /api/admin/audit`), for administrators: a page of records
 * filtered by user, path, action and time, with a cursor, or every matching record as JSON
 * lines for export. Routes translate HTTP to the core's `AuditReader`, which decides who may
 * read.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_ACTIONS, AUDIT_DOORS, type AuditQuery, type AuditReader, type AuditRecord, auditJson } from '../core/audit.ts';
import type { Backend } from '../core/backend.ts';
import { LadingError } from '../core/errors.ts';
import { parsePath } from '../core/path.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { envelope } from './envelope.ts';
import { PagedEnvelope, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface AuditRouteDeps {
  backend: Backend;
  audit: AuditReader;
  authenticate: Authenticate;
}

const AUDIT = '/api/admin/audit';
const PAGE = 100;
export const JSON_LINES = 'application/x-ndjson';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

const AuditRecordSchema = Type.Object({
  seq: Type.Integer({ minimum: 1, description: 'Its place in the chain.' }),
  at: Type.String({ format: 'date-time' }),
  user: Nullable(Type.String(), 'Who acted; null when no user is known (a failed sign-in with an unknown name, a share link\'s visitor).'),
  address: Nullable(Type.String(), 'The client\'s address; null for an admin command.'),
  door: Type.Union(AUDIT_DOORS.map((d) => Type.Literal(d)), { description: 'Through which door: the API, WebDAV, S3, the web app, an admin command or a share link.' }),
  action: Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a))),
  path: Nullable(Type.String(), 'The path acted on, when there is one.'),
  detail: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), { description: 'Facts about the event (never a secret).' }),
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('denied'), Type.Literal('failed')]),
  prev_hash: Type.String({ description: 'The hash of the record before it (64 zeros for the first).' }),
  hash: Type.String({ description: 'SHA-256 over this record\'s fields and prev_hash.' }),
}, {
  examples: [{
    seq: 42, at: '2026-11-27T12:00:00.000Z', user: 'alice', address: '192.0.2.10', door: 'api', action: 'upload', path: '/lading/home/alice/run.csv',
    detail: { size: 18211 }, outcome: 'ok', prev_hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', hash: '60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752',
  }],
});
const AuditList = PagedEnvelope(AuditRecordSchema, 'Audit records, oldest first.');

const AuditQuerySchema = Type.Object({
  user: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only records of this user.' })),
  path: Type.Optional(Type.String({ minLength: 1, description: 'Only records of this path and below it.' })),
  action: Type.Optional(Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a)), { description: 'Only records of this action.' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only records at or after this time.' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only records before this time.' })),
  limit: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$', examples: ['100'], description: `Records per page, 1 to 1000 (default ${PAGE}).` })),
  after: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'The continuation_token of the previous page.' })),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('jsonl')], {
    description: `jsonl: every matching record (after \`after\`), one JSON object a line (${JSON_LINES}), for export; also chosen by Accept: ${JSON_LINES}.`,
  })),
}, { additionalProperties: false });

export function registerAuditRoutes(app: TypedApp, deps: AuditRouteDeps): void {
  const actorOf = async (request: FastifyRequest) => {
    await deps.authenticate(request);
    return deps.backend.actorOf(request.auth!.credential, viaOf(request));
  };

  app.get(AUDIT, {
    schema: {
      tags: ['admin'], security: [{ bearer: [] }, { session: [] }], operationId: 'listAudit', querystring: AuditQuerySchema,
      summary: 'The audit trail (administrators only): who did what, when, through which door, and the outcome; paged, or exported as JSON lines',
      description: 'Each record carries the hash of the one before it, so an edited or removed record shows (lading audit verify walks the chain). Records older than audit.retention are pruned.',
      response: { 200: AuditList, ...errorResponses(401, 403) },
    },
  }, async (request, reply) => {
    const actor = await actorOf(request);
    const q = request.query;
    const query: Omit<AuditQuery, 'limit'> = {
      user: q.user ?? null, action: q.action ?? null, path: q.path === undefined ? null : parsePath(q.path),
      since: dateOf(q.since, 'since'), until: dateOf(q.until, 'until'), after: q.after === undefined ? null : Number(q.after),
    };
    const lines = q.format === 'jsonl' || (q.format === undefined && (request.headers.accept ?? '').includes(JSON_LINES));
    if (lines) return sendLines(reply, deps.audit.records(actor, query));
    const limit = q.limit === undefined ? PAGE : Number(q.limit);
    const page = await deps.audit.page(actor, { ...query, limit });
    const answer = envelope(page.map(auditJson));
    const last = page.at(-1);
    return { ...answer, Meta: { ...answer.Meta, continuation_token: page.length === limit && last ? String(last.seq) : null } };
  });
}

/** Streams `records` as JSON lines, one record a line; memory stays flat however many there are. */
function sendLines(reply: FastifyReply, records: AsyncGenerator<AuditRecord>): FastifyReply {
  const body = Readable.from((async function* () {
    for await (const r of records) yield `${JSON.stringify(auditJson(r))}\n`;
  })());
  return reply.type(JSON_LINES).send(body);
}

function dateOf(value: string | undefined, name: string): Date | null {
  if (value === undefined) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new LadingError('BAD_REQUEST', `${name} is not a date and time.`);
  return date;
}
