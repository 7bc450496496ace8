/**
 * What every answer says to caches and to browsers' content sniffing. An answer is taken to
 * depend on who asks unless its route says otherwise: each one starts with
 * `Cache-Control: private, no-store`, so neither a browser nor a shared cache keeps an answer
 * made for a bearer token or a session cookie — errors included — and a route whose answer is
 * the same for everyone (published data, the web app's files, landing pages of public PIDs)
 * sets its own Cache-Control. Every answer carries `X-Content-Type-Options: nosniff`, so a
 * browser never runs stored bytes as a script or a page because they look like one.
 */
import type { FastifyReply } from 'fastify';

/** The Cache-Control of an answer that depends on who asks. */
export const PRIVATE_NO_STORE = 'private, no-store';

/**
 * Gives `reply` the headers every answer starts with. NOTE: set on the raw response, so that
 * answers written around Fastify — streamed downloads, the embedded identity provider — carry
 * them too; a route's `reply.header` still replaces them, as Node lets the headers given when
 * the answer is written replace the ones set before.
 */
export function startAnswer(reply: FastifyReply): void {
  const raw = reply.raw;
  if (raw.headersSent) return;
  raw.setHeader('X-Content-Type-Options', 'nosniff');
  raw.setHeader('Cache-Control', PRIVATE_NO_STORE);
}
