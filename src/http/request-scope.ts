/**
 * Runs every request's hooks and handler as a request of the core's `request-scope`, so that
 * what the catalog remembers is proven current once per request rather than once per read.
 */
import { AsyncResource } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runAsRequest } from '../core/request-scope.ts';

/** Adds the hooks that enter the request's scope, first of all hooks, and again after its body was read. */
export function registerRequestScope(app: FastifyInstance): void {
  const scopes = new WeakMap<FastifyRequest, AsyncResource>();
  app.addHook('onRequest', (request, _reply, done) => {
    runAsRequest(() => {
      const resource = new AsyncResource('lading-request');
      scopes.set(request, resource);
      resource.runInAsyncScope(done);
    });
  });
  // NOTE: a body is read in the socket's callbacks, outside the scope: the hooks and the
  // handler after it enter it again.
  app.addHook('preValidation', (request, _reply, done) => {
    const resource = scopes.get(request);
    if (resource) resource.runInAsyncScope(done);
    else done();
  });
}
