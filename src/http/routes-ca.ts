/**
 * The online CA endpoint, reachable the way an identity provider's CA is: `POST
 * /ca/certificate` takes a PEM certificate signing request and a bearer credential (the
 * issuer secret, not a user's token) and answers with a PEM user certificate; `GET
 * /ca/cacert.pem` publishes the CA certificate. It only authenticates the requester and passes
 * the request on; what a certificate says is decided by the CA.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { LadingError } from '../core/errors.ts';
import type { CertificateIssuer } from '../core/ports.ts';
import { requestCredential } from './authorization.ts';
import { Pem, type TypedApp, errorResponses } from './schemas.ts';

export interface CaEndpoint {
  issuer: CertificateIssuer;
  /** The bearer credential the endpoint accepts. */
  secret: string;
  /** The CA certificate, PEM. */
  caPem: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function registerCaRoutes(app: TypedApp, ca: CaEndpoint): void {
  const expected = digest(ca.secret);
  void app.register(async (scope) => {
    for (const type of ['application/pkcs10', 'application/x-pem-file']) {
      scope.addContentTypeParser(type, { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body));
    }

    scope.post('/ca/certificate', {
      schema: {
        summary: 'Issue a user certificate for a PEM certificate signing request (CN = user)',
        tags: ['ca'],
        security: [{ bearer: [] }],
        consumes: ['application/pkcs10', 'application/x-pem-file'],
        response: {
          200: { description: 'The user certificate.', content: { 'application/x-pem-file': { schema: Pem } } },
          ...errorResponses(401, 413, 415),
        },
      },
    }, async (request, reply) => {
      // NOTE: the secret is the operator's choice, so any visible characters may make it up.
      const secret = requestCredential(request.raw, 'any');
      // NOTE: compared as digests so the comparison takes the same time whatever the length.
      if (secret === null || !timingSafeEqual(digest(secret), expected)) {
        throw new LadingError('UNAUTHENTICATED', 'Send the issuer credential as Authorization: Bearer <secret>.');
      }
      if (typeof request.body !== 'string') throw new LadingError('UNSUPPORTED_MEDIA_TYPE', 'Send the request as application/pkcs10 (PEM).');
      const pem = await ca.issuer.issue(request.body);
      request.log.info('issued a user certificate');
      return reply.type('application/x-pem-file').send(pem);
    });

    scope.get('/ca/cacert.pem', {
      schema: {
        summary: 'The CA certificate (PEM)', tags: ['ca'],
        response: { 200: { description: 'The CA certificate.', content: { 'application/x-pem-file': { schema: Pem } } }, ...errorResponses() },
      },
    }, async (_request, reply) => reply.type('application/x-pem-file').send(ca.caPem));
  });
}
