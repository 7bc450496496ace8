/**
 * The in-process `CertificateIssuer`: lading's own CA signs user certificates directly. It
 * trusts its caller to have authenticated the user named in the request; it must only be
 * handed requests built by lading itself or arriving through the authenticated CA endpoint.
 */
import type { CertificateIssuer, Clock } from '../../core/ports.ts';
import { type CertificateAuthority, signUserCertificate } from './ca.ts';
import { certificatePem } from './x509.ts';

export interface LocalIssuerOptions {
  /** The CA, or a function giving the one that signs now (it may change: a rotation). */
  ca: CertificateAuthority | (() => CertificateAuthority);
  clock: Clock;
  /** Lifetime of issued user certificates, in seconds. */
  lifetimeSeconds: number;
}

export function createLocalIssuer(o: LocalIssuerOptions): CertificateIssuer {
  if (!(o.lifetimeSeconds > 0)) throw new Error('local issuer: lifetimeSeconds must be positive');
  return {
    async issue(csrPem) {
      const ca = typeof o.ca === 'function' ? o.ca() : o.ca;
      return certificatePem(await signUserCertificate(ca, csrPem, { now: o.clock.now(), lifetimeSeconds: o.lifetimeSeconds }));
    },
  };
}
