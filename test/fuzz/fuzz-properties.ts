/**
 * The properties every fuzzed exchange must have, one object per property so each can run (and
 * be switched from `todo` to enforced) on its own. Each returns a one-line violation or null; none
 * sends a request or changes state.
 */
import { type JsonSchema, type Operation, documentedResponse, isJsonMediaType, mediaTypeOf } from './openapi-document.ts';
import type { Exchange } from './http-exchange.ts';
import type { ResolvedRequest } from './request-plans.ts';
import { schemaErrors } from './schema-validator.ts';

/** An entity a 2xx create, upload or rename answered for, with the reads that followed it. */
export interface Accepted {
  exchange: Exchange;
  /** Parent and name the request asked for, when the request says (a form upload into a collection names it by the file name). */
  requested: { parent: string; name: string } | null;
  /** Parent and name the response reports. */
  stored: { parent: string; name: string };
  /** True for an upload, whose own GET must show its record (a collection's GET lists its children). */
  isDataObject: boolean;
  /** For a rename, the name before it. */
  renamedFrom: string | null;
  /** `GET` of the entity's own path. */
  metadata: Exchange;
  /** `GET` of the parent collection's listing (path ending in `/`). */
  listing: Exchange;
}

export interface FuzzProperty {
  /** Short id, used in messages and in FINDINGS.md. */
  name: string;
  /** The node:test sub-test title. */
  title: string;
  /** A violation by one exchange, or null. */
  exchange?(ex: Exchange, op: Operation, resolved: ResolvedRequest | null): string | null;
  /** A violation by an accepted create, upload or rename and the reads after it, or null. */
  accepted?(a: Accepted): string | null;
}

/** True when HTTP allows the response a body (not HEAD, not 1xx, 204 or 304). */
function mayHaveBody(ex: Exchange): boolean {
  const status = ex.response!.status;
  return ex.request.method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304;
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

const isInt = (v: unknown) => Number.isInteger(v);

/** What is wrong with `value` as lading's envelope for `status`, or null. */
function envelopeProblem(value: unknown, status: number): string | null {
  const v = value as { Meta?: Record<string, unknown>; Response?: Record<string, unknown> } | null;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'the body is not a JSON object';
  const { Meta: meta, Response: response } = v;
  if (!meta || typeof meta !== 'object') return 'no Meta object';
  if (!response || typeof response !== 'object' || !('data' in response) || !('errors' in response)) return 'no Response { data, errors }';
  if (typeof meta.data_type !== 'string' || !isInt(meta.elements) || !isInt(meta.errors) || !isInt(meta.status)) {
    return `Meta is not { data_type: string, elements, errors, status: integers }: ${JSON.stringify(meta)}`;
  }
  if (meta.status !== status) return `Meta.status is ${String(meta.status)} but the HTTP status is ${status}`;
  const errors = response.errors;
  if (errors !== null && !(Array.isArray(errors) && errors.every((e) => e && typeof e === 'object' && Object.values(e).every((m) => typeof m === 'string')))) {
    return 'Response.errors is neither null nor a list of {title: message} objects';
  }
  if (meta.errors !== (errors?.length ?? 0)) return `Meta.errors is ${String(meta.errors)} but Response.errors has ${errors?.length ?? 0}`;
  if (status >= 400 && (response.data !== null || !errors || errors.length === 0)) return 'an error status without data null and a non-empty Response.errors';
  return null;
}

const noServerError: FuzzProperty = {
  name: 'no-server-error',
  title: 'no request makes the server fail (every response comes, with a status below 500)',
  exchange(ex) {
    if (!ex.response) return `no response: ${ex.error}`;
    if (ex.response.status >= 500) return `status ${ex.response.status}`;
    return ex.error;
  },
};

/** True when a documented schema is lading's envelope (an object with Meta and Response). */
function isEnvelopeSchema(schema: JsonSchema): boolean {
  return Boolean(schema.properties?.Meta && schema.properties.Response);
}

const jsonEnvelope: FuzzProperty = {
  name: 'json-envelope',
  title: 'every JSON response is the envelope, with Meta.status equal to the HTTP status',
  exchange(ex, op) {
    if (!ex.response || !mayHaveBody(ex)) return null;
    const { status, headers, body } = ex.response;
    // An error is always the envelope; a success only when it is JSON (downloads and PEM are
    // bytes, which the documented-schema property judges).
    if (status < 400 && !isJsonMediaType(mediaTypeOf(headers['content-type'] as string | undefined))) return null;
    // NOTE: the document may give a status another JSON shape on purpose (the Handle REST
    // API's at /api/handles); an undocumented status gets no such exception.
    const schema = documentedResponse(op, status)?.doc.content?.['application/json']?.schema;
    if (schema && !isEnvelopeSchema(schema)) return null;
    const parsed = parseJson(body);
    if (!parsed.ok) return `the ${status} body is not JSON (${parsed.error})`;
    return envelopeProblem(parsed.value, status);
  },
};

const documentedStatus: FuzzProperty = {
  name: 'documented-status',
  title: 'every status is one the document gives for the operation',
  exchange(ex, op) {
    if (!ex.response) return null;
    if (documentedResponse(op, ex.response.status)) return null;
    // NOTE: an empty backend path makes the target the bare `/api/registered`, which is another
    // path of the document; a method it does not list there is rightly refused with 405.
    if (ex.response.status === 405 && ex.request.target.split('?')[0] === '/api/registered') return null;
    return `status ${ex.response.status} is not documented for ${op.id} (documented: ${Object.keys(op.responses).join(', ') || 'none'})`;
  },
};

const documentedSchema: FuzzProperty = {
  name: 'documented-schema',
  title: 'every body has a documented media type and validates against the documented schema',
  exchange(ex, op) {
    if (!ex.response || !mayHaveBody(ex)) return null;
    const { status, headers, body } = ex.response;
    const doc = documentedResponse(op, status);
    if (!doc) return null;
    const content = doc.doc.content ?? {};
    const mediaType = mediaTypeOf(headers['content-type'] as string | undefined);
    if (body.length === 0 && Object.keys(content).length === 0) return null;
    if (!(mediaType in content)) {
      return `a ${status} ${mediaType || 'body without Content-Type'} is not documented for ${op.id} ${doc.key} (documented: ${Object.keys(content).join(', ') || 'no body'})`;
    }
    const schema = content[mediaType]!.schema;
    if (!schema || !isJsonMediaType(mediaType)) return null;
    const parsed = parseJson(body);
    if (!parsed.ok) return `the ${status} body is not JSON (${parsed.error})`;
    const errors = schemaErrors(schema, parsed.value);
    return errors.length ? `the ${status} body does not match the schema of ${op.id} ${doc.key}: ${errors.slice(0, 3).join('; ')}` : null;
  },
};

/** `Response.data` and `Meta.elements` of a 2xx JSON answer; null for anything else. */
export function successData(ex: Exchange): { data: unknown; elements: unknown } | null {
  if (!ex.response || ex.response.status < 200 || ex.response.status >= 300) return null;
  const parsed = parseJson(ex.response.body);
  if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object') return null;
  const v = parsed.value as { Meta?: { elements?: unknown }; Response?: { data?: unknown } };
  return { data: v.Response?.data, elements: v.Meta?.elements };
}

const show = (s: string) => JSON.stringify(s);

/** The entity names of a list of `{<name>: record}` objects (spec 2.2). */
function namesIn(data: unknown): string[] {
  if (!Array.isArray(data)) return [];
  return data.flatMap((record) => (record && typeof record === 'object' ? Object.keys(record) : []));
}

const namesListed: FuzzProperty = {
  name: 'names-listed',
  title: 'an accepted name is stored as sent and listed in its parent, whose Meta.elements counts the entries',
  accepted(a) {
    const name = a.requested?.name ?? a.stored.name;
    if (a.requested && (a.requested.name !== a.stored.name || a.requested.parent !== a.stored.parent)) {
      return `asked for ${show(a.requested.name)} in ${show(a.requested.parent)}, the response reports ${show(a.stored.name)} in ${show(a.stored.parent)}`;
    }
    const metadata = successData(a.metadata);
    if (!metadata) return `GET of the accepted entity ${show(name)} answers ${a.metadata.response?.status ?? a.metadata.error}`;
    if (a.isDataObject && !namesIn(metadata.data).includes(name)) return `GET of the accepted data object ${show(name)} does not show it: ${JSON.stringify(metadata.data).slice(0, 200)}`;
    const listing = successData(a.listing);
    if (!listing || !Array.isArray(listing.data)) return `the listing of ${show(a.stored.parent)} answers ${a.listing.response?.status ?? a.listing.error} without a list`;
    const names = namesIn(listing.data);
    if (!names.includes(name)) return `the accepted name ${show(name)} is missing from the listing of ${show(a.stored.parent)} (${names.length} entries, Meta.elements ${String(listing.elements)})`;
    if (listing.elements !== names.length) return `the listing shows ${names.length} entries but Meta.elements is ${String(listing.elements)}`;
    if (a.renamedFrom !== null && a.renamedFrom !== name && names.includes(a.renamedFrom)) return `after the rename, the old name ${show(a.renamedFrom)} is still listed`;
    return null;
  },
};

const malformedBodyRefused: FuzzProperty = {
  name: 'malformed-body-refused',
  title: 'a JSON body that is invalid UTF-8, cut short or empty is refused',
  exchange(ex, _op, resolved) {
    if (!resolved?.malformedBody || !ex.response) return null;
    return ex.response.status < 300 ? `a malformed JSON body was accepted with ${ex.response.status}` : null;
  },
};

/** Every property, in the order the sub-tests run. */
export const PROPERTIES: readonly FuzzProperty[] = [
  noServerError, jsonEnvelope, documentedStatus, documentedSchema, namesListed, malformedBodyRefused,
];
