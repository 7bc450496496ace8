/**
 * Reads lading's OpenAPI 3.1 document (`GET /api/specs`) into the operations the fuzzer drives
 * and answers which response the document gives for a status. Only reads the document: it
 * sends no request and knows nothing of lading's routes.
 */

/** The subset of JSON Schema (2020-12) that the arbitraries and the validator understand. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  $ref?: string;
  [keyword: string]: unknown;
}

export interface MediaTypeDoc {
  schema?: JsonSchema;
}

export interface ResponseDoc {
  description?: string;
  content?: Record<string, MediaTypeDoc>;
}

export interface ParameterDoc {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
}

/** One path × method of the document, with its `$ref`s resolved. */
export interface Operation {
  /** `METHOD /template`, e.g. `PUT /api/registered/{*}`: how findings name the operation. */
  id: string;
  method: string;
  /** The path template, e.g. `/api/registered/{*}`. */
  template: string;
  parameters: ParameterDoc[];
  requestBody: { required: boolean; content: Record<string, MediaTypeDoc> } | null;
  /** True when the operation declares a security requirement (a bearer token). */
  secured: boolean;
  /** Keys as in the document: `200`, `4XX`, `default`, … */
  responses: Record<string, ResponseDoc>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

/**
 * Replaces every local `$ref` (`#/components/…`) by the value it points at. Throws on a
 * reference that is not local or does not resolve, so a document change that the fuzzer cannot
 * follow fails loudly instead of fuzzing less.
 */
function resolveRefs<T>(value: T, doc: OpenApiDocument, depth = 0): T {
  if (depth > 32) throw new Error('$ref nesting deeper than 32: a cyclic schema is not supported by the fuzzer');
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, doc, depth)) as T;
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref} is not supported by the fuzzer`);
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      target = (target as Record<string, unknown> | undefined)?.[key];
    }
    if (target === undefined) throw new Error(`$ref ${ref} does not resolve`);
    return resolveRefs(target as T, doc, depth + 1);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, doc, depth)])) as T;
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (!raw) continue;
      const op = resolveRefs(raw, doc) as {
        parameters?: ParameterDoc[]; requestBody?: { required?: boolean; content?: Record<string, MediaTypeDoc> };
        security?: unknown[]; responses?: Record<string, ResponseDoc>;
      };
      ops.push({
        id: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        parameters: op.parameters ?? [],
        requestBody: op.requestBody ? { required: op.requestBody.required ?? false, content: op.requestBody.content ?? {} } : null,
        secured: (op.security ?? []).length > 0,
        responses: op.responses ?? {},
      });
    }
  }
  return ops;
}

/**
 * The response the document gives `op` for `status`: the exact code first, then its range
 * (`4XX`, case-insensitive), then `default`; `null` when the status is not documented.
 */
export function documentedResponse(op: Operation, status: number): { key: string; doc: ResponseDoc } | null {
  const range = `${Math.floor(status / 100)}XX`;
  for (const [key, doc] of Object.entries(op.responses)) if (key === String(status)) return { key, doc };
  for (const [key, doc] of Object.entries(op.responses)) if (key.toUpperCase() === range) return { key, doc };
  return op.responses.default ? { key: 'default', doc: op.responses.default } : null;
}

/** `application/json; charset=utf-8` → `application/json`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}
