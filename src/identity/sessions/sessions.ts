/**
 * Sessions behind bearer tokens. Tokens are 256-bit random strings shown to the client once;
 * the catalog stores only their SHA-256, so a leaked catalog yields no usable token. Each
 * session carries the user's backend credential (see `CredentialManager` in `core/ports.ts`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { LadingError } from '../../core/errors.ts';
import type { LoginAttempt, LoginService } from './login.ts';
import type { BackendCredential, Clock, CredentialStatus, SessionStore } from '../../core/ports.ts';
import type { SessionRecord } from '../../core/types.ts';
import type { CredentialManager } from '../../core/ports.ts';

export interface SessionServiceOptions {
  catalog: SessionStore;
  clock: Clock;
  credentials: CredentialManager;
  /** Checks passwords for `login`. */
  login: LoginService;
  /** Lifetime of a token, in seconds. */
  tokenTtlSeconds: number;
  /**
   * Called by `refresh` before a new credential is issued, so a login through an identity
   * provider lasts only as long as the provider agrees; rejects with `UNAUTHENTICATED` when not.
   */
  reauthorize?(session: SessionRecord): Promise<void>;
  /**
   * Consulted by `authenticate` for an unknown token: when the token proves a user by other
   * means (an identity provider's access token), who and until when; a session keyed by the
   * token's hash is then opened as by a login. Null when it proves nothing.
   */
  externalBearer?(token: string): Promise<{ user: string; expiresAt: Date } | null>;
}

export interface AuthenticatedSession {
  session: SessionRecord;
  credential: BackendCredential;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionService {
  readonly #o: SessionServiceOptions;
  // NOTE: one regeneration per session at a time within this process; the catalog update is
  // the cross-process guard.
  readonly #refreshing = new Map<string, Promise<'valid' | 'regenerated'>>();

  constructor(options: SessionServiceOptions) {
    this.#o = options;
  }

  /**
   * Checks a local user's password through the login service and opens a session. Rejects as
   * `LoginService.verify` does: `UNAUTHENTICATED` with one message for an unknown user, a wrong
   * password or a user without a password; `TOO_MANY_REQUESTS` after too many failures.
   */
  async login(attempt: LoginAttempt): Promise<{ token: string; user: string }> {
    const user = await this.#o.login.verify(attempt);
    return { token: await this.open(user), user };
  }

  /** Opens a session for a user whose identity was already proven; returns the bearer token. */
  async open(user: string): Promise<string> {
    const now = this.#o.clock.now();
    const token = randomBytes(32).toString('base64url');
    await this.#o.catalog.putSession({
      tokenHash: hashToken(token),
      user,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.#o.tokenTtlSeconds * 1000),
      credential: await this.#o.credentials.issue(user, now),
    });
    return token;
  }

  async #openExternal(token: string, check: NonNullable<SessionServiceOptions['externalBearer']>): Promise<SessionRecord | null> {
    const proven = await check(token);
    if (!proven) return null;
    const now = this.#o.clock.now();
    const session: SessionRecord = {
      tokenHash: hashToken(token), user: proven.user, createdAt: now, expiresAt: proven.expiresAt,
      credential: await this.#o.credentials.issue(proven.user, now),
    };
    await this.#o.catalog.putSession(session);
    return session;
  }

  /** The session behind a bearer token. `UNAUTHENTICATED` (with `invalidToken`) when unknown or expired. */
  async authenticate(token: string): Promise<AuthenticatedSession> {
    let session = await this.#o.catalog.getSession(hashToken(token), this.#o.clock.now());
    if (!session && this.#o.externalBearer) session = await this.#openExternal(token, this.#o.externalBearer);
    if (!session || !session.credential) {
      throw new LadingError('UNAUTHENTICATED', 'The token is invalid or has expired; log in again.', { details: { invalidToken: true } });
    }
    return { session, credential: await this.#o.credentials.open(session.credential) };
  }

  /**
   * Regenerates the session's backend credential when it has expired (spec 4.9). Concurrent
   * calls for one session share one regeneration.
   */
  async refresh(token: string): Promise<'valid' | 'regenerated'> {
    const { session } = await this.authenticate(token);
    const running = this.#refreshing.get(session.tokenHash);
    if (running) return running;
    const job = (async () => {
      const now = this.#o.clock.now();
      const status = await this.#o.credentials.inspect(session.credential!);
      if (status.notAfter.getTime() > now.getTime()) return 'valid' as const;
      await this.#o.reauthorize?.(session);
      const fresh = await this.#o.credentials.issue(session.user, now);
      // NOTE: compare-and-swap against the credential we found expired: when another process
      // regenerated it meanwhile, its proxy is kept (ours is dropped) and none is lost.
      if (await this.#o.catalog.updateSessionCredential(session.tokenHash, fresh, session.credential)) return 'regenerated' as const;
      if (!(await this.#o.catalog.getSession(session.tokenHash, this.#o.clock.now()))) {
        throw new LadingError('UNAUTHENTICATED', 'The session has ended; log in again.', { details: { invalidToken: true } });
      }
      return 'regenerated' as const;
    })();
    this.#refreshing.set(session.tokenHash, job);
    try {
      return await job;
    } finally {
      this.#refreshing.delete(session.tokenHash);
    }
  }

  /**
   * The session behind a bearer token and the validity of its backend credential (the proxy
   * certificate), with the time it was checked at, for `GET /auth/proxy`. Rejects as `authenticate` does.
   */
  async credentialStatus(token: string): Promise<{ session: SessionRecord; status: CredentialStatus; now: Date }> {
    const { session } = await this.authenticate(token);
    return { session, status: await this.#o.credentials.inspect(session.credential!), now: this.#o.clock.now() };
  }

  async logout(token: string): Promise<void> {
    await this.#o.catalog.deleteSession(hashToken(token));
  }
}
