/**
 * Password login, once for every way in: `POST /auth/login`, `/auth/b2safeproxy` and the
 * embedded OpenID Provider's sign-in page all call `LoginService.verify`. It holds the one
 * timing defence for unknown users, the one failed-attempt limiter (counted in the catalog so
 * the limit holds across nodes) and the one audit line per attempt. It opens no session and
 * never logs a password.
 *
 * Failures are counted under three keys, each with its own bound, so that one person's typos or
 * a guesser at one account never lock out anyone else: the account from one address (the low
 * bound: a guesser, or a user who forgot the password), the account from every address together
 * (a guesser spread over many addresses), and the address over every account (a password spray;
 * much higher, since many users may share one NAT or reverse proxy).
 */
import { type AuditDoor, type AuditVia, type Auditor, noAudit } from '../../core/audit.ts';
import { LadingError } from '../../core/errors.ts';
import type { AccountStore, Clock, OidcStore } from '../../core/ports.ts';
import type { Observer } from '../../core/observer.ts';
import { hashPassword, verifyPassword } from '../secrets/password.ts';

/** Length of the window failed attempts are counted in. */
export const LOGIN_WINDOW_SECONDS = 15 * 60;

/** How often, at most, counters of past windows are removed while failures come. */
const PURGE_EVERY_MS = 10 * 60_000;

/** An account may fail this many times the per-address bound, from every address together. */
export const ACCOUNT_FACTOR = 4;

/**
 * An address may fail this many times the per-address bound, over every account together: high
 * enough that the typos of many users behind one NAT or reverse proxy never reach it, low
 * enough to stop one address trying a password on account after account.
 */
export const ADDRESS_FACTOR = 20;

/** The structured logger the audit lines go to (pino's shape). */
export interface AuditLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface LoginServiceOptions {
  catalog: Pick<AccountStore, 'getUser'> & Pick<OidcStore, 'oidcCount' | 'oidcResetCount' | 'oidcDeleteExpired'>;
  clock: Clock;
  logger: AuditLog;
  /**
   * Failed attempts allowed per window for one account from one address; the account from every
   * address gets `ACCOUNT_FACTOR` times as many, and one address over every account
   * `ADDRESS_FACTOR` times as many.
   */
  maxFailedLogins: number;
  /** Told of each failed login and each refusal by the limiter (the metrics); none by default. */
  observer?: Pick<Observer, 'loginFailed' | 'limited'>;
  /**
   * The audit trail failed and refused sign-ins are recorded in (a success is recorded when its
   * session opens); none when absent. Attempts the limiter refuses are not recorded: it bounds
   * them, and the log line and the metric count them.
   */
  trail?: Auditor;
}

export interface LoginAttempt {
  username: string;
  password: string;
  /** The client's address, for the limits and the audit line. */
  address: string;
  /** Which door the attempt came through, for the audit line: `api` or `browser`. */
  via: 'api' | 'browser';
  /** The door for the audit trail, when not the one `via` implies (`api` or `web`): WebDAV's Basic password. */
  door?: AuditDoor;
}

/** Where a login attempt came from, for the audit trail. */
export function viaOfAttempt(attempt: LoginAttempt): AuditVia {
  return { door: attempt.door ?? (attempt.via === 'browser' ? 'web' : 'api'), address: attempt.address };
}

// NOTE: verifying against a real hash for unknown users keeps the time of a failed login the
// same whether or not the user exists.
let dummyHash: Promise<string> | undefined;

export class LoginService {
  readonly #o: LoginServiceOptions;
  #lastPurge = 0;

  constructor(options: LoginServiceOptions) {
    this.#o = options;
  }

  /**
   * Checks a local user's password and resolves with the user's name. Rejects with
   * `TOO_MANY_REQUESTS` (`details.retryAfter` in seconds) when, in the current window, the
   * account has failed too often from this address or from every address together, or this
   * address has failed too often over every account — before the password is looked at, so a
   * correct one does not get through either — and with `UNAUTHENTICATED` and one message for an
   * unknown user, a wrong password, a group or a user without a password. The right password
   * of a disabled account gets `UNAUTHENTICATED` saying so. A refused attempt counts nowhere; a
   * failed one counts under all three keys; a success clears the count of the account from this
   * address only (a guesser elsewhere keeps the account's count). Logs one line per attempt.
   */
  async verify(attempt: LoginAttempt): Promise<string> {
    const { catalog, clock, logger, maxFailedLogins } = this.#o;
    const username = attempt.username.trim();
    const audit = { user: username, address: attempt.address, via: attempt.via };
    const now = clock.now();
    const name = username.toLowerCase();
    // NOTE: an address holds no '/', so the first one ends it: no two pairs share a key.
    const pairKey = `login-fail:pair:${attempt.address}/${name}`;
    const accountKey = `login-fail:account:${name}`;
    const addressKey = `login-fail:address:${attempt.address}`;
    const keys = [pairKey, accountKey, addressKey];
    const bounds = [maxFailedLogins, maxFailedLogins * ACCOUNT_FACTOR, maxFailedLogins * ADDRESS_FACTOR];
    const counts = await Promise.all(keys.map((key) => catalog.oidcCount(key, now, LOGIN_WINDOW_SECONDS, false)));
    const limited = counts.filter((c, i) => c.count >= bounds[i]!);
    if (limited.length > 0) {
      const resetsAt = Math.max(...limited.map((c) => c.resetsAt.getTime()));
      const retryAfter = Math.max(1, Math.ceil((resetsAt - now.getTime()) / 1000));
      logger.warn({ ...audit, retryAfter }, 'login refused: too many failed attempts');
      this.#o.observer?.limited?.('login');
      const minutes = Math.ceil(retryAfter / 60);
      throw new LadingError('TOO_MANY_REQUESTS', `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes > 1 ? 's' : ''}.`, { details: { retryAfter } });
    }
    const user = username ? await catalog.getUser(username) : null;
    const hash = user && user.kind !== 'group' ? user.passwordHash : null;
    dummyHash ??= hashPassword('not a password');
    const ok = await verifyPassword(attempt.password, hash ?? (await dummyHash));
    if (!user || !hash || !ok) {
      await Promise.all(keys.map((key) => catalog.oidcCount(key, now, LOGIN_WINDOW_SECONDS, true)));
      await this.#purgeCounters(now);
      logger.warn(audit, 'login failed: wrong user name or password');
      // NOTE: the name tried is kept only when it names an account: an unknown one may be a password typed in the wrong field.
      await (this.#o.trail ?? noAudit).record({ user: user ? user.name : null, via: viaOfAttempt(attempt) }, 'login', null, 'denied', { error: 'WRONG_PASSWORD' });
      this.#o.observer?.loginFailed?.(attempt.via);
      throw new LadingError('UNAUTHENTICATED', 'Wrong user name or password.');
    }
    await catalog.oidcResetCount(pairKey);
    if (user.disabled) {
      logger.warn({ ...audit, user: user.name }, 'login refused: the account is disabled');
      await (this.#o.trail ?? noAudit).record({ user: user.name, via: viaOfAttempt(attempt) }, 'login', null, 'denied', { error: 'DISABLED' });
      throw new LadingError('UNAUTHENTICATED', 'This account is disabled; ask the operators of this service.');
    }
    logger.info({ ...audit, user: user.name }, 'login succeeded');
    return user.name;
  }

  // NOTE: each failure may add counters (one per account and address); counters of past
  // windows count for nothing, and removing them once per ten minutes per process, riding on
  // failures, keeps in the catalog only those of the last 25 minutes at most.
  async #purgeCounters(now: Date): Promise<void> {
    if (now.getTime() - this.#lastPurge < PURGE_EVERY_MS) return;
    this.#lastPurge = now.getTime();
    await this.#o.catalog.oidcDeleteExpired(now).catch((err: unknown) => this.#o.logger.warn({ err }, 'login: removing expired counters failed'));
  }
}
