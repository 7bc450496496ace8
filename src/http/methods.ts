/**
 * Which methods each URL allows, learned from the routes as they are registered: a method no
 * route serves on an existing path is 405 with `Allow`, OPTIONS is 204 with `Allow`, and a path
 * no route has is 404. It decides nothing about what a route does with its method.
 */
import type { FastifyInstance } from 'fastify';
import { LadingError } from '../core/errors.ts';
import { sendError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route exists only to refuse its method (405); its method is not in `Allow`. */
    refused?: boolean;
  }
  interface FastifyInstance {
    /** The `Allow` value for a request URL (query ignored), or null when no route has it. */
    allowOf(url: string): string | null;
  }
}

/** The order methods are listed in `Allow`; others follow in the order routes name them. */
const ORDER = ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE'];

/** A route URL (`/a/:id/*`) as a regular expression matching request paths. */
function matcher(url: string): RegExp {
  const pattern = url.split(/(\*|:[A-Za-z0-9_]+)/).map((piece) => {
    if (piece === '*') return '.*';
    if (piece.startsWith(':')) return '[^/]+';
    return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('');
  return new RegExp(`^${pattern}$`);
}

/**
 * Registers the method rules on `app`: call it before any route, so that every route is seen.
 * Decorates `app` with `allowOf` and sets the not-found handler.
 */
export function registerMethodRules(app: FastifyInstance): void {
  const routes: { match: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    if (route.config?.refused) return;
    const methods = [route.method].flat().map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.push('HEAD');
    routes.push({ match: matcher(route.url ?? route.path), methods });
  });

  app.decorate('allowOf', (url: string): string | null => {
    let path = url.split('?', 1)[0]!;
    try {
      path = decodeURI(path);
    } catch {
      // The router refuses such a URL before this is asked; match it as it is.
    }
    const methods = new Set(routes.filter((r) => r.match.test(path)).flatMap((r) => r.methods));
    if (methods.size === 0) return null;
    const listed = [...ORDER.filter((m) => methods.has(m)), ...[...methods].filter((m) => !ORDER.includes(m) && m !== 'OPTIONS')];
    return [...listed, 'OPTIONS'].join(', ');
  });

  app.setNotFoundHandler((request, reply) => {
    const allow = app.allowOf(request.url);
    if (allow === null) return sendError(reply, new LadingError('NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]}.`));
    if (request.method === 'OPTIONS') return reply.code(204).header('Allow', allow).send();
    return sendError(reply, new LadingError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${request.url.split('?')[0]}.`, { details: { allow } }));
  });
}
