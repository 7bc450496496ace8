/**
 * The OpenAPI document (`@fastify/swagger`, `app.swagger()`) and its viewer
 * (`@fastify/swagger-ui`, under `/api/docs`), with the routes and answers that registering the
 * two plugins gives, but loaded when first used: the plugins, YAML and the static file server
 * are some 140 modules, a tenth of a server's start, that most processes never use.
 *
 * At start this registers only what the plugins would leave behind: hooks that collect the
 * routes the document is made of, the `swagger` decorator, and the viewer's routes with the
 * URLs, methods and options the plugins give them. The first call of `app.swagger()` runs
 * `@fastify/swagger` against a stand-in instance and replays the collected routes into the
 * hooks it added; the first request to a viewer route runs `@fastify/swagger-ui` against a
 * stand-in that records its routes, and each viewer route then calls the handler the plugin
 * made for it. What is answered is thus the plugins' own code. `test/http/openapi-lazy.test.ts`
 * checks the route table and the answers against the plugins registered as such.
 */
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

const require = createRequire(import.meta.url);

/** What `@fastify/swagger-ui` is registered with here. */
export interface ViewerOptions {
  routePrefix: string;
  uiConfig: Record<string, unknown>;
}

type Done = (err?: Error) => void;
type Plugin = (instance: unknown, options: unknown, done: Done) => unknown;
type Hook = (...args: unknown[]) => unknown;
type Handler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;
type ErrorHandler = (this: unknown, error: Error, request: FastifyRequest, reply: FastifyReply) => unknown;

/** What a plugin run against a stand-in registered. */
interface Recorded {
  hooks: Map<string, Hook[]>;
  decorations: Map<string, unknown>;
  /** By `<methods> <url as the plugin gave it>`. */
  routes: Map<string, RouteOptions>;
}

/** Runs a plugin function (callback or async) and resolves when it is done. */
function run(plugin: Plugin, instance: unknown, options: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const result = plugin(instance, options, (err) => (err ? reject(err) : resolve()));
    if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(() => resolve(), reject);
  });
}

const routeKey = (method: RouteOptions['method'], url: string): string => `${[method].flat().join(',')} ${url}`;

/**
 * A stand-in Fastify instance that records the hooks, decorators and routes a plugin
 * registers, and runs the plugins it registers against itself. `base` gives what the plugins
 * read of their instance. Anything else a plugin asks for is missing, so a new version that
 * needs more fails the tests instead of answering differently.
 */
function standIn(base: object): { instance: object; recorded: Recorded; settled(): Promise<void> } {
  const recorded: Recorded = { hooks: new Map(), decorations: new Map(), routes: new Map() };
  const pending: Promise<void>[] = [];
  const instance: object = Object.assign(Object.create(base) as object, {
    addHook(name: string, hook: Hook) {
      recorded.hooks.set(name, [...(recorded.hooks.get(name) ?? []), hook]);
      return instance;
    },
    decorate(name: string, value: unknown) {
      recorded.decorations.set(name, value);
      return instance;
    },
    route(options: RouteOptions & { path?: string }) {
      recorded.routes.set(routeKey(options.method, options.url ?? options.path ?? ''), options);
      return instance;
    },
    register(plugin: Plugin, options: unknown) {
      const done = run(plugin, instance, options);
      pending.push(done);
      return done;
    },
  });
  return {
    instance, recorded,
    async settled() {
      for (let i = 0; i < pending.length; i++) await pending[i];
    },
  };
}

/**
 * Registers the document and the viewer on `app`, at the point where the plugins would be
 * registered (before the routes, so that every route is collected).
 */
export async function registerOpenApi(app: FastifyInstance, document: FastifyDynamicSwaggerOptions, viewer: ViewerOptions): Promise<void> {
  // --- @fastify/swagger: what its registration adds (hooks and the decorator), nothing loaded.
  const routes: RouteOptions[] = [];
  const instances: FastifyInstance[] = [];
  let ready = false;
  app.addHook('onRoute', (route) => { routes.push(route); });
  app.addHook('onRegister', (instance) => { instances.push(instance); });
  app.addHook('onReady', (done) => {
    ready = true;
    done();
  });
  let swagger: ((opts?: { yaml?: boolean }) => unknown) | null = null;
  const documenter = (): (opts?: { yaml?: boolean }) => unknown => {
    if (swagger) return swagger;
    const { instance, recorded } = standIn({ getSchemas: () => app.getSchemas() });
    const { fastifySwagger } = require('@fastify/swagger') as { fastifySwagger: Plugin };
    // NOTE: the dynamic mode registers synchronously (it calls `done` before returning).
    void run(fastifySwagger, instance, { ...document });
    const hooks = (name: string) => recorded.hooks.get(name) ?? [];
    for (const route of routes) for (const hook of hooks('onRoute')) hook.call(app, route);
    for (const registered of instances) for (const hook of hooks('onRegister')) void hook.call(app, registered);
    const made = recorded.decorations.get('swagger') as (opts?: { yaml?: boolean }) => unknown;
    // NOTE: before ready the plugin's function throws, as it does when registered; only a
    // function that has seen ready is kept.
    if (!ready) return made;
    for (const hook of hooks('onReady')) hook.call(app, () => {});
    return (swagger = made);
  };
  app.decorate('swagger', function (opts?: { yaml?: boolean }) {
    return documenter()(opts);
  } as FastifyInstance['swagger']);

  // --- @fastify/swagger-ui: its decorator and its routes, under the prefix it is given.
  app.decorate('swaggerCSP', require('@fastify/swagger-ui/static/csp.json'));
  await app.register(async (scope) => {
    let made: Promise<Map<string, RouteOptions>> | null = null;
    let routesOfViewer: Map<string, RouteOptions> | null = null;
    const load = async (): Promise<Map<string, RouteOptions>> => {
      const { instance, recorded, settled } = standIn(Object.defineProperties({}, {
        log: { get: () => scope.log },
        errorHandler: { get: () => scope.errorHandler },
        swagger: { get: () => app.swagger },
        swaggerCSP: { get: () => (app as unknown as { swaggerCSP: unknown }).swaggerCSP },
      }));
      const { fastifySwaggerUi } = require('@fastify/swagger-ui') as { fastifySwaggerUi: Plugin };
      await run(fastifySwaggerUi, instance, { ...viewer });
      await settled();
      return recorded.routes;
    };
    // NOTE: a hook, not the handlers, waits for the plugin: the handlers stay the plugin's
    // own, synchronous ones, which matters to how Fastify treats what they return.
    scope.addHook('onRequest', (request, _reply, done) => {
      if (routesOfViewer || request.is404) return done();
      made ??= load();
      made.then((r) => {
        routesOfViewer = r;
        done();
      }, (err: Error) => {
        made = null;
        done(err);
      });
    });
    const madeFor = (key: string): RouteOptions => {
      const route = routesOfViewer?.get(key);
      if (!route) throw new Error(`@fastify/swagger-ui registered no route ${key}`);
      return route;
    };
    const delegate = (key: string): Handler => function (request, reply) {
      return (madeFor(key).handler as Handler).call(this, request, reply);
    };
    // NOTE: as lib/routes.js of @fastify/swagger-ui 5 registers them (no theme, no baseDir).
    for (const url of ['/', '/static/index.html', '/static/swagger-initializer.js', '/json', '/yaml']) {
      scope.route({ url, method: 'GET', schema: { hide: true }, handler: delegate(routeKey('GET', url)) });
    }
    // NOTE: as @fastify/static 9 registers its wildcard route (prefix '/static', decorateReply false).
    const files = routeKey(['HEAD', 'GET'], '/static/*');
    scope.route({
      method: ['HEAD', 'GET'], url: '/static/*', schema: { hide: true },
      errorHandler(this: unknown, error, request, reply) {
        const own = routesOfViewer?.get(files)?.errorHandler as ErrorHandler | undefined;
        return own ? own.call(this, error, request, reply) : scope.errorHandler(error, request, reply);
      },
      handler: delegate(files),
    });
  }, { prefix: viewer.routePrefix });
}
