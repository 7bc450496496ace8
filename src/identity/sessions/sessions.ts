/**
 * Sessions behind bearer tokens and browser cookies. Tokens are 256-bit random strings shown to
 * the client once; the catalog stores only their SHA-256, so a leaked catalog yields no usable
 * token. Each session carries the user's backend credential (see `CredentialManager` in
 * `core/ports.ts`). A browser session also has an idle deadline, moved on by use, and a CSRF
 * token derived from its own token. It reads no request: `http/authorization.ts` does.
 */
import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type AuditVia, type Auditor, noAudit } from '../../core/audit.ts';
import { LadingError } from '../../core/errors.ts';
import { type LoginAttempt, type LoginService, viaOfAttempt } from './login.ts';
import type { BackendCredential, Clock, CredentialStatus, SessionStore } from '../../core/ports.ts';
import type { SessionKind, SessionRecord } from '../../core/types.ts';
import type { CredentialManager } from '../../core/ports.ts';

export interface SessionServiceOptions {
  catalog: SessionStore;
  clock: Clock;
  credentials: CredentialManager;
  /** Checks passwords for `login`. */
  login: LoginService;
  /** The audit trail sign-ins, sign-outs and tokens are recorded in; none when absent. */
  trail?: Auditor;
  /** Lifetime of a bearer token, in seconds. */
  tokenTtlSeconds: number;
  /** Longest lifetime a user may choose for an API token, in seconds (default: `tokenTtlSeconds`). */
  tokenTtlMaxSeconds?: number;
  /**
   * Browser sessions: the idle timeout (at least 60 s) and the absolute one, in seconds;
   * default 7200 and 43200.
   */
  browser?: { idleSeconds: number; maxSeconds: number };
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
  return hash('sha256', token, 'hex');
}

/**
 * The CSRF token of the browser session behind `token`: an HMAC keyed by the session's own
 * token, so every node computes it without storing it, and nobody without the (HttpOnly)
 * cookie can.
 */
export function csrfTokenOf(token: string): string {
  return createHmac('sha256', token).update('lading csrf token').digest('base64url');
}

/** Whether `given` is the CSRF token of the session behind `token`, compared in constant time. */
export function csrfTokenMatches(token: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const expected = Buffer.from(csrfTokenOf(token));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A session just opened: its token (shown once) and its record. */
export interface OpenedSession {
  token: string;
  session: SessionRecord;
}

/** Labels of API tokens: printable, at most this many characters. */
export const TOKEN_LABEL_MAX = 100;
/** The shortest lifetime an API token may be given, in seconds. */
export const TOKEN_LIFETIME_MIN = 60;

export class SessionService {
  readonly #o: SessionServiceOptions;
  // NOTE: one regeneration per session at a time within this process; the catalog update is
  // the cross-process guard.
  readonly #refreshing = new Map<string, Promise<'valid' | 'regenerated'>>();
  /** Credentials opened for (frozen, remembered) session records. */
  readonly #opened = new WeakMap<SessionRecord, BackendCredential>();

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
    return { token: await this.open(user, viaOfAttempt(attempt)), user };
  }

  /** Opens a session for a user whose identity was already proven; returns the bearer token. Recorded as a `login` through `via`. */
  async open(user: string, via?: AuditVia): Promise<string> {
    return (await this.#signIn(user, 'api', via)).token;
  }

  async #signIn(user: string, kind: SessionKind, via: AuditVia | undefined): Promise<OpenedSession> {
    const opened = await this.#open(user, kind, null);
    await this.#trail.record({ user, via }, 'login', null, 'ok', { kind, session: opened.session.id });
    return opened;
  }

  get #trail(): Auditor {
    return this.#o.trail ?? noAudit;
  }

  /**
   * Opens a browser session (the cookie's token) for a user whose identity was already proven,
   * with the idle and absolute timeouts of `browser`.
   */
  async openBrowser(user: string, via?: AuditVia): Promise<OpenedSession> {
    return this.#signIn(user, 'browser', via ?? { door: 'web', address: null });
  }

  /**
   * Makes an API token for `user` (the "API access" page), labelled `label` (trimmed; 1 to
   * `TOKEN_LABEL_MAX` characters, no control characters, else `BAD_REQUEST`), living as long as
   * a login's token. The token is in the answer and nowhere else.
   */
  async createToken(user: string, label: string, lifetimeSeconds?: number, via?: AuditVia): Promise<OpenedSession> {
    const clean = label.trim();
    if (clean.length === 0 || clean.length > TOKEN_LABEL_MAX || /[\u0000-\u001f\u007f-\u009f]/.test(clean)) {
      throw new LadingError('BAD_REQUEST', `A token's label is 1 to ${TOKEN_LABEL_MAX} characters, without control characters.`);
    }
    const max = this.tokenLifetimes.max;
    if (lifetimeSeconds !== undefined && (!Number.isSafeInteger(lifetimeSeconds) || lifetimeSeconds < TOKEN_LIFETIME_MIN || lifetimeSeconds > max)) {
      throw new LadingError('BAD_REQUEST', `A token's lifetime is ${TOKEN_LIFETIME_MIN} seconds to ${max} seconds (${Math.floor(max / 86400)} days) here.`);
    }
    const opened = await this.#open(user, 'api', clean, lifetimeSeconds);
    await this.#trail.record({ user, via }, 'token.create', null, 'ok', { token: opened.session.id, label: clean });
    return opened;
  }

  /** The lifetime of an API token when its maker chooses none, and the longest they may choose, in seconds. */
  get tokenLifetimes(): { default: number; max: number } {
    return { default: this.#o.tokenTtlSeconds, max: Math.max(this.#o.tokenTtlMaxSeconds ?? this.#o.tokenTtlSeconds, this.#o.tokenTtlSeconds) };
  }

  /** The live API tokens of `user`, oldest first (records only: the tokens are not stored). */
  async listTokens(user: string): Promise<SessionRecord[]> {
    return this.#o.catalog.listSessionsOf(user, 'api', this.#o.clock.now());
  }

  /** Revokes the API token of `user` named `id`, on every node at once. `NOT_FOUND` when `user` has no live token by that id. */
  async revokeToken(user: string, id: string, via?: AuditVia): Promise<void> {
    await this.#trail.track({ user, via }, 'token.revoke', null, async () => {
      const tokens = await this.listTokens(user);
      const token = tokens.find((t) => t.id === id);
      if (!token || !(await this.#o.catalog.deleteSessionById(user, id))) {
        throw new LadingError('NOT_FOUND', 'You have no API token with this id (it may have been revoked or have expired).');
      }
    }, undefined, { token: id });
  }

  async #open(user: string, kind: SessionKind, label: string | null, lifetimeSeconds?: number): Promise<OpenedSession> {
    const now = this.#o.clock.now();
    const token = randomBytes(32).toString('base64url');
    const browser = this.#browser();
    const session: SessionRecord = {
      tokenHash: hashToken(token),
      id: randomBytes(12).toString('base64url'),
      kind,
      user,
      label,
      createdAt: now,
      expiresAt: new Date(now.getTime() + (kind === 'browser' ? browser.maxSeconds : (lifetimeSeconds ?? this.#o.tokenTtlSeconds)) * 1000),
      idleExpiresAt: kind === 'browser' ? new Date(now.getTime() + browser.idleSeconds * 1000) : null,
      lastUsedAt: now,
      credential: await this.#o.credentials.issue(user, now),
    };
    await this.#o.catalog.putSession(session);
    return { token, session };
  }

  #browser(): { idleSeconds: number; maxSeconds: number } {
    return this.#o.browser ?? { idleSeconds: 7200, maxSeconds: 43200 };
  }

  async #openExternal(token: string, check: NonNullable<SessionServiceOptions['externalBearer']>): Promise<SessionRecord | null> {
    const proven = await check(token);
    if (!proven) return null;
    const now = this.#o.clock.now();
    const session: SessionRecord = {
      tokenHash: hashToken(token), id: randomBytes(12).toString('base64url'), kind: 'api', user: proven.user, label: null,
      createdAt: now, expiresAt: proven.expiresAt, idleExpiresAt: null, lastUsedAt: now,
      credential: await this.#o.credentials.issue(proven.user, now),
    };
    await this.#o.catalog.putSession(session);
    return session;
  }

  /**
   * The session behind a token carried as `kind` says (`api`: a bearer token, the default;
   * `browser`: the session cookie). `UNAUTHENTICATED` (with `invalidToken`) when unknown, dead
   * or of the other kind: a cookie's token is no bearer token, nor the other way round. Marks
   * the session used, and moves a browser session's idle deadline on, writing to the catalog
   * at most once a minute per session.
   */
  async authenticate(token: string, kind: SessionKind = 'api'): Promise<AuthenticatedSession> {
    const now = this.#o.clock.now();
    let session = await this.#o.catalog.getSession(hashToken(token), now);
    if (!session && kind === 'api' && this.#o.externalBearer) session = await this.#openExternal(token, this.#o.externalBearer);
    if (!session || !session.credential || session.kind !== kind) {
      throw new LadingError('UNAUTHENTICATED', kind === 'browser' ? 'Your session has ended; sign in again.' : 'The token is invalid or has expired; log in again.', { details: { invalidToken: true } });
    }
    session = await this.#touch(session, now);
    // NOTE: a catalog that remembers its reads returns the same record until it changes; its
    // credential is then opened once (the record is the key, so a changed one is opened again).
    let credential = this.#opened.get(session);
    if (!credential) {
      credential = await this.#o.credentials.open(session.credential!);
      if (Object.isFrozen(session)) this.#opened.set(session, credential);
    }
    return { session, credential };
  }

  // NOTE: the hot path reads the session on every request but writes it only when its last
  // recorded use is older than the slack (a minute, less for very short idle timeouts): the
  // idle deadline is then at most that much early, never late.
  async #touch(session: SessionRecord, now: Date): Promise<SessionRecord> {
    const idleMs = session.idleExpiresAt ? this.#browser().idleSeconds * 1000 : null;
    const slack = Math.min(60_000, idleMs === null ? 60_000 : idleMs / 4);
    if (session.lastUsedAt && now.getTime() - session.lastUsedAt.getTime() < slack) return session;
    const idleExpiresAt = idleMs === null ? null : new Date(now.getTime() + idleMs);
    if (!(await this.#o.catalog.touchSession(session.tokenHash, now, idleExpiresAt))) return session;
    return { ...session, lastUsedAt: now, idleExpiresAt };
  }

  /**
   * Regenerates the session's backend credential when it has expired (spec 4.9). Concurrent
   * calls for one session share one regeneration.
   */
  async refresh(token: string, kind: SessionKind = 'api'): Promise<'valid' | 'regenerated'> {
    const { session } = await this.authenticate(token, kind);
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
   * The session behind a token carried as `kind` says and the validity of its backend
   * credential (the proxy certificate), with the time it was checked at, for `GET /auth/proxy`.
   * Rejects as `authenticate` does.
   */
  async credentialStatus(token: string, kind: SessionKind = 'api'): Promise<{ session: SessionRecord; status: CredentialStatus; now: Date }> {
    const { session } = await this.authenticate(token, kind);
    return { session, status: await this.#o.credentials.inspect(session.credential!), now: this.#o.clock.now() };
  }

  /** Ends the session of `token`; recorded as a `logout` of its user through `via` when it was live. */
  async logout(token: string, via?: AuditVia): Promise<void> {
    const session = await this.#o.catalog.getSession(hashToken(token), this.#o.clock.now());
    await this.#o.catalog.deleteSession(hashToken(token));
    if (session) await this.#trail.record({ user: session.user, via }, 'logout', null, 'ok', { kind: session.kind, session: session.id });
  }
}
