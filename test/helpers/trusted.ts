/**
 * Test doubles: in-process trust without a CA. The credential simply names the user and
 * `trustedAuthority` believes it; it never expires. For tests that are not about credentials.
 */
import type { Authority, BackendCredential, CredentialManager } from '../../src/core/ports.ts';
import { LadingError } from '../../src/core/errors.ts';

/**
 * In-process trust for deployments and tests without a CA: the credential simply names the
 * user, and `trustedAuthority` believes it. It never expires. Not for production — the proxy
 * credential manager is the default there.
 */
export const trustedCredentials: CredentialManager = {
  async issue(user) {
    return JSON.stringify({ kind: 'trusted', user });
  },
  async open(stored) {
    return JSON.parse(stored) as BackendCredential;
  },
  async inspect(stored) {
    const { user } = JSON.parse(stored) as { user: string };
    return { notAfter: new Date(8.64e15), subject: `trusted:${user}` };
  },
};

export const trustedAuthority: Authority = {
  async resolve(credential) {
    if (credential.kind !== 'trusted' || typeof credential.user !== 'string') {
      throw new LadingError('INVALID_CREDENTIAL', 'The backend does not accept this kind of credential.');
    }
    return credential.user;
  },
};
