/**
 * The seam between sessions and the backend's trust boundary. A `CredentialManager` obtains a
 * backend credential for a user who has just proved who they are (login), stores it in a form
 * safe to keep in the catalog, and reopens it per request. The bearer token never reaches the
 * backend; only what `open` returns does.
 */
import type { Authority, BackendCredential } from '../core/ports.ts';
import { LadingError } from '../core/errors.ts';

export interface CredentialStatus {
  /** The credential's end of validity. */
  notAfter: Date;
  /** Subject the backend will see, for messages and `lading proxy show`. */
  subject: string;
  /** Issuer of that subject's certificate, when the credential is a certificate. */
  issuer?: string;
}

export interface CredentialManager {
  /** Obtains a fresh credential for `user`; returns the stored (serialised, encrypted) form. */
  issue(user: string, now: Date): Promise<string>;
  /** The backend credential inside a stored one. */
  open(stored: string): Promise<BackendCredential>;
  /** Validity facts of a stored credential. */
  inspect(stored: string): Promise<CredentialStatus>;
}

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
