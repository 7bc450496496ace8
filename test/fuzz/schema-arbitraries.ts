/**
 * JSON Schema → fast-check arbitraries: values that satisfy a schema (reaching the handlers) and
 * values that do not (wrong types, missing required fields, out-of-bounds strings), with strings
 * drawn towards the edge cases that break name handling. Knows JSON Schema only: meanings such
 * as "this string is a path" come in as hints from the caller.
 */
import fc from 'fast-check';
import type { JsonSchema } from './openapi-document.ts';
import { isValid } from './schema-validator.ts';

/** C1 controls U+0080–U+009F. */
const c1 = fc.integer({ min: 0x80, max: 0x9f }).map((c) => String.fromCharCode(c));
/** Bidi embedding/override U+202A–U+202E and isolates U+2066–U+2069. */
const bidi = fc.constantFrom(0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069).map((c) => String.fromCharCode(c));

/**
 * Characters and short sequences that name handling gets wrong, one class each so that every
 * class comes up often: line and paragraph separators, C1 controls, bidi controls, BOM and
 * invisible spaces, NUL and other C0 controls, lone surrogates (valid in JSON as `\ud800`
 * escapes, not in UTF-8), traversal and separator spellings, and Unicode that normalisation or
 * case folding changes.
 */
export const edgeToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('\u2028', '\u2029'),
  c1,
  bidi,
  fc.constantFrom('\ufeff', '\u200b', '\u00a0'),
  fc.constantFrom('\u0000', '\u0001', '\t', '\n', '\r', '\u007f'),
  fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\ud83d'),
  fc.constantFrom('.', '..', '/', '\\', '%2F', '%2f', '%2e%2e', '%00', '%', '%ff'),
  fc.constantFrom('?', '#', ';', '*', '"', '\'', '<', '&', ' ', 'é', 'e\u0301', 'ß', '\u0130', '\ufb01', 'Å', '\u212b', '😀', '\u{10ffff}', '\u0301'),
);

const safeChunk = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,10}$/);

/** An ordinary name: letters, digits, `.`, `_`, `-`, not starting with a dot. */
export const safeName: fc.Arbitrary<string> = safeChunk;

/**
 * Strings that are usually ordinary and sometimes made of edge tokens, empty, or huge: beyond a
 * 255-byte name, a 4096-byte path, a 16 KiB request head and a 64 KiB form limit.
 */
export const edgeString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: safeChunk },
  { weight: 4, arbitrary: fc.array(fc.oneof({ weight: 2, arbitrary: safeChunk }, { weight: 3, arbitrary: edgeToken }), { minLength: 1, maxLength: 5 }).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('', '.', '..') },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(256), 'é'.repeat(128), 'x'.repeat(5000), 'y'.repeat(70_000)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/**
 * A name for a new entity: mostly ordinary (so chains of requests reach the handlers), often
 * with one edge token inside (so accepted-but-mangled names show up), sometimes any edge string.
 */
export const entityName: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: safeName },
  { weight: 4, arbitrary: fc.tuple(safeChunk, edgeToken, fc.option(safeChunk, { nil: '' })).map(([a, e, b]) => `${a}${e}${b}`) },
  { weight: 1, arbitrary: edgeString },
);

/** Values of hinted properties and parameters: `name → arbitrary` for the value's meaning. */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noDefaultInfinity: true, noNaN: true }), edgeString,
  fc.array(fc.oneof(fc.integer(), edgeString), { maxLength: 3 }),
  fc.dictionary(safeName, fc.oneof(fc.integer(), edgeString), { maxKeys: 3 }),
);

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

function unsupported(schema: JsonSchema, keyword: string): never {
  throw new Error(`the fuzzer's schema arbitraries do not support '${keyword}' (in ${JSON.stringify(schema).slice(0, 200)}); extend test/fuzz/schema-arbitraries.ts`);
}

/**
 * Values that satisfy `schema`. A string property or parameter whose name is in `hints` takes
 * the hint's values instead (they may be symbolic, resolved when the request is sent).
 * Throws on keywords it does not know (`allOf`, …) so a schema change is noticed.
 */
export function validValue(schema: JsonSchema, hints: Hints = {}, name?: string): fc.Arbitrary<unknown> {
  if (name !== undefined && hints[name] && (typesOf(schema).includes('string') || !schema.type)) return hints[name]!;
  if (schema.allOf) unsupported(schema, 'allOf');
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf || schema.oneOf) return fc.oneof(...(schema.anyOf ?? schema.oneOf)!.map((s) => validValue(s, hints, name)));
  const types = typesOf(schema);
  if (types.length === 0) return anyJson;
  return fc.oneof(...types.map((type) => validOfType(schema, type, hints)));
}

function validOfType(schema: JsonSchema, type: string, hints: Hints): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? Infinity;
      return edgeString.filter((s) => [...s].length >= min && [...s].length <= max);
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 });
    case 'number':
      return fc.double({ min: schema.minimum, max: schema.maximum, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? validValue(schema.items, hints) : anyJson, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'object': {
      const props = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validValue(s, hints, k)]));
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in props) });
    }
    default:
      return unsupported(schema, `type: ${type}`);
  }
}

/**
 * Values that do not satisfy `schema`: another JSON type, an object without one of its required
 * properties or with one property made invalid, a string out of its length bounds, a value
 * outside an enum. `plain` turns hinted symbolic values into placeholders for the check that
 * the value really is invalid.
 */
export function invalidValue(schema: JsonSchema, hints: Hints = {}, plain: (v: unknown) => unknown = (v) => v): fc.Arbitrary<unknown> {
  const candidates: fc.Arbitrary<unknown>[] = [anyJson];
  const types = typesOf(schema);
  if (types.includes('object') && schema.properties) {
    const props = schema.properties;
    const valid = validValue(schema, hints) as fc.Arbitrary<Record<string, unknown>>;
    for (const key of schema.required ?? []) {
      candidates.push(valid.map((v) => Object.fromEntries(Object.entries(v).filter(([k]) => k !== key))));
    }
    for (const [key, sub] of Object.entries(props)) {
      candidates.push(fc.tuple(valid, invalidValue(sub, hints, plain)).map(([v, bad]) => ({ ...v, [key]: bad })));
    }
  }
  if (types.includes('string')) {
    if ((schema.minLength ?? 0) > 0) candidates.push(fc.constant(''));
    if (schema.maxLength !== undefined) candidates.push(fc.constant('z'.repeat(schema.maxLength + 1)));
  }
  if (schema.enum || schema.anyOf || schema.oneOf) candidates.push(edgeString);
  return fc.oneof(...candidates).filter((v) => !isValid(schema, plain(v)));
}
