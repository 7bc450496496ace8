/**
 * Password login, once for every way in: `POST /auth/login`, `/auth/b2safeproxy` and the
 * embedded OpenID Provider's sign-in page all call `LoginService.verify`. It holds the one
 * timing defence for unknown users, the one failed-attempt limiter (per account and per
 * address, counted in the catalog so the limit holds across nodes) and the one audit line per
 * attempt. It opens no session and never logs a password.
 */
import { LadingError } from '../../core/errors.ts';
import type { AccountStore, Clock, OidcStore } from '../../core/ports.ts';
import { hashPassword, verifyPassword } from '../secrets/password.ts';

/** Length of the window failed attempts are counted in. */
export const LOGIN_WINDOW_SECONDS = 15 * 60;

/** An address may fail this many times more often than one account (several users behind one NAT). */
const ADDRESS_FACTOR = 4;

/** The structured logger the audit lines go to (pino's shape). */
export interface AuditLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface LoginServiceOptions {
  catalog: Pick<AccountStore, 'getUser'> & Pick<OidcStore, 'oidcCount' | 'oidcResetCount'>;
  clock: Clock;
  logger: AuditLog;
  /** Failed attempts allowed per account per window; an address gets four times as many. */
  maxFailedLogins: number;
}

export interface LoginAttempt {
  username: string;
  password: string;
  /** The client's address, for the per-address limit and the audit line. */
  address: string;
  /** Which door the attempt came through, for the audit line: `api` or `browser`. */
  via: 'api' | 'browser';
}

// NOTE: verifying against a real hash for unknown users keeps the time of a failed login the
// same whether or not the user exists.
let dummyHash: Promise<string> | undefined;

export class LoginService {
  readonly #o: LoginServiceOptions;

  constructor(options: LoginServiceOptions) {
    this.#o = options;
  }

  /**
   * Checks a local user's password and resolves with the user's name. Rejects with
   * `TOO_MANY_REQUESTS` (`details.retryAfter` in seconds) when the account or the address has
   * failed too often in the current window — before the password is looked at, so a correct
   * one does not get through either — and with `UNAUTHENTICATED` and one message for an
   * unknown user, a wrong password, a group or a user without a password. The right password
   * of a disabled account gets `UNAUTHENTICATED` saying so. A success clears the account's
   * counter. Logs one line per attempt.
   */
  async verify(attempt: LoginAttempt): Promise<string> {
    const { catalog, clock, logger, maxFailedLogins } = this.#o;
    const username = attempt.username.trim();
    const audit = { user: username, address: attempt.address, via: attempt.via };
    const now = clock.now();
    const accountKey = `login-fail:account:${username.toLowerCase()}`;
    const addressKey = `login-fail:address:${attempt.address}`;
    const [byAccount, byAddress] = await Promise.all([
      catalog.oidcCount(accountKey, now, LOGIN_WINDOW_SECONDS, false),
      catalog.oidcCount(addressKey, now, LOGIN_WINDOW_SECONDS, false),
    ]);
    const limited = [
      byAccount.count >= maxFailedLogins ? byAccount : null,
      byAddress.count >= maxFailedLogins * ADDRESS_FACTOR ? byAddress : null,
    ].filter((c) => c !== null);
    if (limited.length > 0) {
      const resetsAt = Math.max(...limited.map((c) => c.resetsAt.getTime()));
      const retryAfter = Math.max(1, Math.ceil((resetsAt - now.getTime()) / 1000));
      logger.warn({ ...audit, retryAfter }, 'login refused: too many failed attempts');
      const minutes = Math.ceil(retryAfter / 60);
      throw new LadingError('TOO_MANY_REQUESTS', `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes > 1 ? 's' : ''}.`, { details: { retryAfter } });
    }
    const user = username ? await catalog.getUser(username) : null;
    const hash = user && user.kind !== 'group' ? user.passwordHash : null;
    dummyHash ??= hashPassword('not a password');
    const ok = await verifyPassword(attempt.password, hash ?? (await dummyHash));
    if (!user || !hash || !ok) {
      await Promise.all([
        catalog.oidcCount(accountKey, now, LOGIN_WINDOW_SECONDS, true),
        catalog.oidcCount(addressKey, now, LOGIN_WINDOW_SECONDS, true),
      ]);
      logger.warn(audit, 'login failed: wrong user name or password');
      throw new LadingError('UNAUTHENTICATED', 'Wrong user name or password.');
    }
    await catalog.oidcResetCount(accountKey);
    if (user.disabled) {
      logger.warn({ ...audit, user: user.name }, 'login refused: the account is disabled');
      throw new LadingError('UNAUTHENTICATED', 'This account is disabled; ask the operators of this service.');
    }
    logger.info({ ...audit, user: user.name }, 'login succeeded');
    return user.name;
  }
}
