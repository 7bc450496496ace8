/**
 * The HTTP `CertificateIssuer`: obtains user certificates from an online CA endpoint (an
 * identity provider's, or lading's own `POST /ca/certificate`) by sending a PEM CSR with a
 * bearer credential and reading back a PEM certificate. The credential goes only into the
 * Authorization header: never into a URL, a log line or an error message.
 */
import { LadingError } from '../../core/errors.ts';
import type { CertificateIssuer } from '../../core/ports.ts';
import { certificatePem, parseCertificate, x509 } from './x509.ts';

export interface HttpIssuerOptions {
  /** The endpoint's URL, e.g. https://idp.example.org/ca/certificate. */
  url: string;
  /** Bearer credential the endpoint accepts. */
  secret: string;
  /** Time allowed for one request, in milliseconds (default 30 s). */
  timeoutMs?: number;
}

export function createHttpIssuer(o: HttpIssuerOptions): CertificateIssuer {
  const url = new URL(o.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('http issuer: the URL must be http(s)');
  if (!o.secret) throw new Error('http issuer: a bearer credential is required');
  return {
    /**
     * Rejects with `UNAVAILABLE` when the endpoint cannot be reached or fails (5xx), `BAD_REQUEST`
     * when it refuses the request (400), and `INTERNAL` when it refuses our credential or answers
     * with something that is not a certificate for the requested key.
     */
    async issue(csrPem) {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/pkcs10', accept: 'application/x-pem-file', authorization: `Bearer ${o.secret}` },
          body: csrPem,
          signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
        });
      } catch (cause) {
        throw new LadingError('UNAVAILABLE', 'The certificate authority cannot be reached.', { cause });
      }
      const text = await res.text().catch(() => '');
      if (res.status >= 500) throw new LadingError('UNAVAILABLE', `The certificate authority failed (HTTP ${res.status}).`);
      if (res.status === 400) throw new LadingError('BAD_REQUEST', 'The certificate authority refused the certificate request.');
      if (res.status !== 200) throw new LadingError('INTERNAL', `The certificate authority refused the request (HTTP ${res.status}); check ca.issuer_secret_file.`);
      let cert: x509.X509Certificate;
      try {
        cert = parseCertificate(text);
      } catch (cause) {
        throw new LadingError('INTERNAL', 'The certificate authority answered with something that is not a PEM certificate.', { cause });
      }
      const requested = new x509.Pkcs10CertificateRequest(csrPem).publicKey.rawData;
      if (!Buffer.from(cert.publicKey.rawData).equals(Buffer.from(requested))) {
        throw new LadingError('INTERNAL', 'The certificate authority returned a certificate for another key.');
      }
      return certificatePem(cert);
    },
  };
}
