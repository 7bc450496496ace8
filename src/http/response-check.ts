/**
 * Makes a response that its schema would change an error: the serializer built from a route's
 * response schema drops fields the schema does not name (or whose key misses its pattern) and
 * coerces mismatched types, which would give a client a silently shortened answer. With these
 * hooks such an answer is logged and sent as a 500 instead, so tests catch it. It changes no
 * answer that matches its schema.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** What each reply's handler gave to serialize, until the serialized text is checked. */
const given = new WeakMap<FastifyReply, unknown>();

/** Registers the check on `app`; every route's serialized JSON must say what its handler returned. */
export function registerResponseCheck(app: FastifyInstance): void {
  app.addHook('preSerialization', async (_request, reply, payload: unknown) => {
    given.set(reply, payload);
    return payload;
  });
  app.addHook('onSend', async (request, reply, payload: unknown) => {
    if (!given.has(reply)) return payload;
    const original = given.get(reply);
    given.delete(reply);
    if (typeof payload !== 'string') return payload;
    // NOTE: JSON.stringify is the reference: it keeps every field and does what a handler's
    // values (Dates, undefined) mean in JSON; the schema's serializer must say the same.
    const expected: unknown = JSON.parse(JSON.stringify(original) ?? 'null');
    const sent: unknown = JSON.parse(payload);
    if (isDeepStrictEqual(sent, expected)) return payload;
    throw new Error(`The ${reply.statusCode} response of ${request.method} ${request.routeOptions.url ?? request.url} does not match its schema.`);
  });
}
