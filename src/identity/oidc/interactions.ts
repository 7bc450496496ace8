/**
 * The embedded provider's interaction steps: the HTML login page (local accounts, scrypt
 * passwords, checked by the one `LoginService` with its failed-attempt limiter), the consent
 * page naming what lading will read, and their form handlers, with CSRF protection. Works on raw Node requests; the Fastify wiring is in
 * `http/routes-oidc.ts`. It never opens lading sessions and never logs a password.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import type { Logger } from 'pino';
import { LadingError, isLadingError } from '../../core/errors.ts';
import type { LoginService } from '../sessions/login.ts';
import type { Clock, OidcStore } from '../../core/ports.ts';
import { esc, pageLayout as layout } from './pages.ts';
import { PROVIDER_MOUNT, SCOPE_CLAIMS } from './provider.ts';

const CSRF_KIND = 'lading:csrf';

export interface InteractionOptions {
  catalog: OidcStore;
  clock: Clock;
  logger: Logger;
  /** Origin of the provider (scheme://host:port); form posts from anywhere else are refused. */
  origin: string;
  /** Checks passwords, with the failed-attempt limiter and the audit line. */
  login: LoginService;
}

/** The end of an interaction step, for `provider.interactionFinished`. */
export interface Finish {
  result: InteractionResults;
  merge: boolean;
}

/** A page to send: status, HTML and extra headers. */
export interface Page {
  status: number;
  html: string;
  headers?: Record<string, string>;
}

/** Headers every interaction page carries: no framing, no caching, no third-party anything. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'private, no-store',
  'x-frame-options': 'DENY',
  // NOTE: not no-referrer, under which browsers send `Origin: null` with the form and the origin check fails.
  'referrer-policy': 'same-origin',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

/** The login page; `error` is shown above the form, `username` is kept on a retry. */
export function renderLoginPage(input: { action: string; csrf: string; error?: string; username?: string }): string {
  return layout('Sign in', `
<h1>Sign in</h1>
<p>Use your lading account to continue to the data staging service.</p>
${input.error ? `<div class="error" role="alert" id="login-error">${esc(input.error)}</div>` : ''}
<form method="post" action="${esc(input.action)}" autocomplete="on"${input.error ? ' aria-describedby="login-error"' : ''}>
<input type="hidden" name="csrf" value="${esc(input.csrf)}">
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required${input.username ? '' : ' autofocus'} value="${esc(input.username ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${input.username ? ' autofocus' : ''}>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>
<footer>Accounts are created by the operators of this service. If you have forgotten your password, ask them to set a new one.</footer>`);
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Your account identifier, to recognise you when you come back',
  profile: 'Your user name',
  email: 'Your e-mail address, if your account has one',
  offline_access: 'Stay signed in, so your access can be renewed without asking you again',
};

/** The consent page, listing in words what the client will read. */
export function renderConsentPage(input: { action: string; abortAction: string; csrf: string; clientName: string; account: string; scopes: string[] }): string {
  const items = input.scopes.filter((s) => SCOPE_TEXT[s]).map((s) => `<li>${esc(SCOPE_TEXT[s]!)}</li>`).join('\n');
  return layout('Allow access', `
<h1>Allow access to your account?</h1>
<p><strong>${esc(input.clientName)}</strong> asks to read the following about you. You are signed in as <span class="who">${esc(input.account)}</span>.</p>
<ul class="claims">
${items}
</ul>
<form method="post" action="${esc(input.action)}">
<input type="hidden" name="csrf" value="${esc(input.csrf)}">
<div class="actions">
<button type="submit" class="primary">Allow</button>
<button type="submit" class="secondary" formaction="${esc(input.abortAction)}">Cancel</button>
</div>
</form>
<footer>Only what is listed here is shared. Choose Cancel to go back without signing in.</footer>`);
}

/**
 * The interaction steps of one embedded provider. Each method returns a `Page` to send or how
 * to finish the interaction (the caller hands that to `provider.interactionFinished`). Rejects with `FORBIDDEN` for
 * a missing or wrong CSRF token or a cross-site form post, and with `BAD_REQUEST` when the
 * interaction is unknown or has expired.
 */
export class Interactions {
  readonly #o: InteractionOptions;

  constructor(options: InteractionOptions) {
    this.#o = options;
  }

  async #details(provider: Provider, req: IncomingMessage, res: ServerResponse) {
    try {
      return await provider.interactionDetails(req, res);
    } catch (cause) {
      throw new LadingError('BAD_REQUEST', 'This sign-in attempt has expired or was started in another browser; start again from /auth/askauth.', { cause });
    }
  }

  async #csrfToken(uid: string, expiresAt: Date): Promise<string> {
    const now = this.#o.clock.now();
    const existing = await this.#o.catalog.oidcGet(CSRF_KIND, uid, now);
    if (existing) return existing.payload;
    const token = randomBytes(32).toString('base64url');
    await this.#o.catalog.oidcInsert(CSRF_KIND, uid, { payload: token, expiresAt }, now);
    return (await this.#o.catalog.oidcGet(CSRF_KIND, uid, now))?.payload ?? token;
  }

  async #checkCsrf(req: IncomingMessage, uid: string, given: unknown): Promise<void> {
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin;
    if (site === 'cross-site' || (origin !== undefined && origin !== this.#o.origin)) {
      this.#o.logger.warn({ uid, origin, site }, 'oidc login: refused a cross-site form post');
      throw new LadingError('FORBIDDEN', 'The form was not sent from this site.');
    }
    const stored = await this.#o.catalog.oidcGet(CSRF_KIND, uid, this.#o.clock.now());
    const a = Buffer.from(typeof given === 'string' ? given : '');
    const b = Buffer.from(stored?.payload ?? '');
    if (!stored || a.length !== b.length || !timingSafeEqual(a, b)) {
      this.#o.logger.warn({ uid }, 'oidc login: refused a form post without a valid CSRF token');
      throw new LadingError('FORBIDDEN', 'The form has expired or was not sent from this site; reload the page and try again.');
    }
  }

  /** GET of the interaction: the login or the consent page. */
  async show(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<Page> {
    const details = await this.#details(provider, req, res);
    const csrf = await this.#csrfToken(details.uid, new Date(details.exp * 1000));
    const base = `${PROVIDER_MOUNT}/interaction/${details.uid}`;
    if (details.prompt.name === 'login') {
      return { status: 200, html: renderLoginPage({ action: `${base}/login`, csrf }) };
    }
    const client = await provider.Client.find(String(details.params.client_id));
    const scopes = String(details.params.scope ?? '').split(' ').filter((s) => s in SCOPE_CLAIMS || s === 'offline_access');
    return {
      status: 200,
      html: renderConsentPage({
        action: `${base}/confirm`, abortAction: `${base}/abort`, csrf,
        clientName: client?.clientName ?? String(details.params.client_id), account: details.session?.accountId ?? '', scopes,
      }),
    };
  }

  /**
   * POST of the login form. Returns how to finish the interaction, or the login page again
   * with an error: 401 for a wrong user name or password, 429 with Retry-After when the
   * account or the address has failed too often.
   */
  async login(provider: Provider, req: IncomingMessage, res: ServerResponse, form: Record<string, unknown>, address: string): Promise<Page | Finish> {
    const details = await this.#details(provider, req, res);
    if (details.prompt.name !== 'login') throw new LadingError('BAD_REQUEST', 'This sign-in step is already complete.');
    await this.#checkCsrf(req, details.uid, form.csrf);
    const action = `${PROVIDER_MOUNT}/interaction/${details.uid}/login`;
    const csrf = String(form.csrf);
    const username = typeof form.username === 'string' ? form.username.trim() : '';
    const password = typeof form.password === 'string' ? form.password : '';
    let user: string;
    try {
      user = await this.#o.login.verify({ username, password, address, via: 'browser' });
    } catch (err) {
      if (isLadingError(err, 'TOO_MANY_REQUESTS')) {
        return {
          status: 429,
          headers: { 'retry-after': String(err.details.retryAfter) },
          html: renderLoginPage({ action, csrf, username, error: err.message }),
        };
      }
      if (isLadingError(err, 'UNAUTHENTICATED')) {
        return { status: 401, html: renderLoginPage({ action, csrf, username, error: 'The user name or password is wrong.' }) };
      }
      throw err;
    }
    return { result: { login: { accountId: user } }, merge: false };
  }

  /** POST of the consent form: grants what the client asked for. */
  async confirm(provider: Provider, req: IncomingMessage, res: ServerResponse, form: Record<string, unknown>): Promise<Finish> {
    const details = await this.#details(provider, req, res);
    if (details.prompt.name !== 'consent') throw new LadingError('BAD_REQUEST', 'This consent step is already complete.');
    await this.#checkCsrf(req, details.uid, form.csrf);
    const accountId = details.session?.accountId;
    if (!accountId) throw new LadingError('BAD_REQUEST', 'Sign in first.');
    const grant = details.grantId
      ? (await provider.Grant.find(details.grantId))!
      : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    this.#o.logger.info({ user: accountId }, 'oidc consent: granted');
    return { result: { consent: details.grantId ? {} : { grantId } }, merge: true };
  }

  /** POST of the consent form's Cancel: ends the interaction with `access_denied`. */
  async abort(provider: Provider, req: IncomingMessage, res: ServerResponse, form: Record<string, unknown>): Promise<Finish> {
    const details = await this.#details(provider, req, res);
    await this.#checkCsrf(req, details.uid, form.csrf);
    this.#o.logger.info({ user: details.session?.accountId }, 'oidc consent: refused by the user');
    return { result: { error: 'access_denied', error_description: 'The user refused access.' }, merge: false };
  }
}
