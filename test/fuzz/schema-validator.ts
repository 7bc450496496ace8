/**
 * JSON Schema validation for the fuzzer, with Ajv's 2020-12 dialect (the dialect of OpenAPI
 * 3.1). Ajv is not a dependency of lading: it comes with Fastify (`@fastify/ajv-compiler`),
 * which is acceptable for a test; this module is the one place that imports it.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema } from './openapi-document.ts';

// NOTE: strict off because OpenAPI schemas carry keywords Ajv does not know (`examples` is
// fine, but `xml`, `discriminator`, … would throw); formats are not checked because the
// document declares none that lading's responses rely on.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** True when `value` satisfies `schema`. */
export function isValid(schema: JsonSchema, value: unknown): boolean {
  return validatorOf(schema)(value) === true;
}

/** The reasons `value` does not satisfy `schema`, one line each; empty when it does. */
export function schemaErrors(schema: JsonSchema, value: unknown): string[] {
  const validate = validatorOf(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}
