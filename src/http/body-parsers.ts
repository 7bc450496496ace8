/**
 * The content-type parsers of request bodies: JSON (strict UTF-8, no prototype keys) and URL-
 * encoded forms become objects; upload bodies are let through unread for the route to stream;
 * any other type on a route that takes a JSON body is 415. Parsers never store a body.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LadingError } from '../core/errors.ts';

const FORM_LIMIT = 64 * 1024;

/** Whether the route `request` reached takes a parsed body (declares a body schema). */
function takesParsedBody(request: FastifyRequest): boolean {
  return request.routeOptions.schema?.body !== undefined;
}

/** Lets a body through unread for an upload route; refuses it (415) on a route wanting JSON. */
function passThrough(request: FastifyRequest, _payload: unknown, done: (err: Error | null, body?: unknown) => void): void {
  if (!takesParsedBody(request)) return done(null);
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim();
  done(new LadingError('UNSUPPORTED_MEDIA_TYPE', `Send this request's body as application/json, not '${type}'.`));
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Registers the parsers on `app`. JSON bodies that are not UTF-8, or that hold a `__proto__`
 * key or a `constructor` key with `prototype`, are refused with `BAD_REQUEST` naming why.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  // NOTE: Fastify's own JSON parser decodes the bytes with U+FFFD for invalid UTF-8, so the
  // body would name something else than the client sent; a URL with the same bytes is 400.
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch (err) {
      return done(new LadingError('BAD_REQUEST', 'The JSON body is not valid UTF-8.', { cause: err }), undefined);
    }
    parseJson(request, text, (err, parsed) => {
      // NOTE: Fastify's parser reports a prototype key as invalid JSON; text that is JSON
      // nonetheless was refused for such a key.
      if ((err as { code?: string } | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isJson(text)) {
        return done(new LadingError('BAD_REQUEST', 'The JSON body has a "__proto__" key (or a "constructor" key holding "prototype"); lading refuses such keys.', { cause: err }), undefined);
      }
      done(err, parsed);
    });
  });
  app.addContentTypeParser('application/octet-stream', passThrough);
  // NOTE: the bytes of a resumable upload (tus), streamed by its route.
  app.addContentTypeParser('application/offset+octet-stream', passThrough);
  app.addContentTypeParser('*', passThrough);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
}
