/**
 * Fastify's own schema compilers (Ajv for validation, fast-json-stringify for responses), made
 * to compile a route's schema when the route first needs it instead of when the app starts:
 * compiling every route's schemas at start-up took most of the time to the first answer, for
 * routes most processes never serve. The compiled code, and what it accepts or writes, are
 * those of Fastify's defaults; only the moment changes. It must not change any answer.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serialize = (data: unknown) => string;
type Compiler<Route, F> = (route: Route) => F;
type Builder<Route, F> = (externalSchemas: unknown, options: unknown) => Compiler<Route, F>;

// NOTE: resolved from Fastify's own location, so these are the very copies Fastify would use;
// required when the first schema is compiled, as they load Ajv and fast-json-stringify (some
// 120 modules), which a process that never validates a request need not load.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const ajvCompiler = (): Builder<unknown, Validate> => (fromFastify('@fastify/ajv-compiler') as () => Builder<unknown, Validate>)();
const serializerCompiler = (): Builder<unknown, Serialize> =>
  (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => Builder<unknown, Serialize> }).SerializerSelector();

/** A validator that compiles on its first call; it carries Ajv's `errors` as Fastify reads them. */
function lazyValidator<Route>(compile: Compiler<Route, Validate>, route: Route): Validate {
  let compiled: Validate | null = null;
  const validate: Validate = (data, context) => {
    compiled ??= compile(route);
    // NOTE: Fastify passes a parent context only to a function with `schemaEnv` (Ajv's), which
    // lets Ajv change a root value (defaults, coercion); forwarding it keeps that behaviour.
    const ok = compiled.schemaEnv ? compiled(data, context) : compiled(data);
    validate.errors = compiled.errors;
    return ok;
  };
  // NOTE: Fastify decides at each request whether to pass the context by this property.
  validate.schemaEnv = true;
  return validate;
}

/** `schemaController.compilersFactory` for `Fastify()`: the defaults, compiling lazily. */
export function lazyCompilers(): CompilersFactory {
  let buildValidator: Builder<unknown, Validate> | null = null;
  let buildSerializer: Builder<unknown, Serialize> | null = null;
  const factory: { buildValidator: Builder<unknown, Validate>; buildSerializer: Builder<unknown, Serialize> } = {
    buildValidator(externalSchemas, options) {
      let compile: Compiler<unknown, Validate> | null = null;
      return (route) => lazyValidator((r) => (compile ??= (buildValidator ??= ajvCompiler())(externalSchemas, options))(r), route);
    },
    buildSerializer(externalSchemas, options) {
      let compile: Compiler<unknown, Serialize> | null = null;
      return (route) => {
        let compiled: Serialize | null = null;
        return (data) => (compiled ??= (compile ??= (buildSerializer ??= serializerCompiler())(externalSchemas, options))(route))(data);
      };
    },
  };
  // NOTE: Fastify types a validator as Ajv's full ValidateFunction (with `schema` and more);
  // it only ever calls it and reads `errors` and `schemaEnv`, which this one carries.
  return factory as unknown as CompilersFactory;
}
