/**
 * Logging in through the server's identity provider with the OAuth 2.0 device authorization
 * grant (RFC 8628): where to go comes from the server (`GET /auth/clients/cli`), the provider
 * issues an access token (and a refresh token) once the user has entered the code in a
 * browser, and the server exchanges that access token for a lading token
 * (`POST /auth/exchange`). Renewing a login is the same exchange with a refreshed access
 * token. Plain fetch: these requests are few. No token is ever printed or logged here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorOfFailure, errorOfResponse } from './api.ts';
import { ClientError } from './errors.ts';
import { EXIT } from './exit-codes.ts';

/** What `GET /auth/clients/cli` answers: how the CLI logs in at the server's provider. */
export interface CliClientInfo {
  issuer: string;
  device_authorization_endpoint: string | null;
  token_endpoint: string;
  revocation_endpoint: string | null;
  client_id: string;
  scopes: string;
  /** Lifetime of lading's tokens, in seconds. */
  token_ttl: number;
  /** True when the provider is the server's embedded one, on its local accounts (password login works too). */
  local_accounts: boolean;
}

/** A lading login: the token and what is known about it. */
export interface Login {
  token: string;
  user: string;
  home: string;
  /** ISO 8601, when known. */
  expiresAt?: string;
  refreshToken?: string;
}

/** What the device authorization endpoint answers (RFC 8628 section 3.2). */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

async function call(url: string, init: globalThis.RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    throw errorOfFailure(err, url, init.signal ?? undefined);
  }
}

async function envelopeData<T>(response: Response): Promise<T> {
  if (!response.ok) throw await errorOfResponse(response);
  return ((await response.json()) as { Response: { data: T } }).Response.data;
}

/** How the CLI logs in at `server`'s identity provider. */
export async function cliClient(server: string): Promise<CliClientInfo> {
  return envelopeData<CliClientInfo>(await call(`${server}/auth/clients/cli`, { headers: { accept: 'application/json' } }));
}

/** An OAuth error answer (`{error, error_description}`) as a `ClientError`, or null when the body is none. */
function oauthError(body: Record<string, unknown>, status: number): ClientError {
  const what = typeof body.error_description === 'string' ? body.error_description : typeof body.error === 'string' ? body.error : `status ${status}`;
  return new ClientError(`the identity provider refused: ${what}`, status === 400 || status === 401 ? EXIT.AUTH : EXIT.FAILED, { status });
}

async function form(url: string, params: Record<string, string>, signal?: AbortSignal): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await call(url, {
    method: 'POST', signal,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params).toString(),
  });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ClientError(`the identity provider answered ${response.status} without JSON`, EXIT.FAILED, { status: response.status });
  }
  return { status: response.status, body };
}

/** Starts a device authorization: the codes to show the user. */
export async function startDeviceAuthorization(info: CliClientInfo, signal?: AbortSignal): Promise<DeviceAuthorization> {
  if (!info.device_authorization_endpoint) {
    throw new ClientError(`the identity provider ${info.issuer} offers no device authorization: log in with a password (lading login --user NAME)`, EXIT.FAILED);
  }
  const { status, body } = await form(info.device_authorization_endpoint, { client_id: info.client_id, scope: info.scopes }, signal);
  if (status !== 200) throw oauthError(body, status);
  return body as unknown as DeviceAuthorization;
}

/**
 * Polls the token endpoint until the user has approved (the provider's tokens), refused or
 * let the code expire (`ClientError(AUTH)`), at the interval the provider asks for and slower
 * after `slow_down` (RFC 8628 section 3.5).
 */
export async function pollDeviceToken(info: CliClientInfo, device: DeviceAuthorization, signal?: AbortSignal): Promise<{ access_token: string; refresh_token?: string }> {
  let interval = Math.max(1, device.interval ?? 5) * 1000;
  const deadline = Date.now() + device.expires_in * 1000;
  for (;;) {
    try {
      await sleep(interval, undefined, { signal });
    } catch (cause) {
      throw new ClientError('interrupted', EXIT.INTERRUPTED, { cause });
    }
    const { status, body } = await form(info.token_endpoint, {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: info.client_id,
    }, signal);
    if (status === 200 && typeof body.access_token === 'string') {
      return { access_token: body.access_token, ...(typeof body.refresh_token === 'string' ? { refresh_token: body.refresh_token } : {}) };
    }
    if (body.error === 'authorization_pending' && Date.now() < deadline) continue;
    if (body.error === 'slow_down') {
      interval += 5000;
      continue;
    }
    if (body.error === 'expired_token' || body.error === 'authorization_pending') throw new ClientError('the code has expired before it was entered: run lading login again', EXIT.AUTH);
    if (body.error === 'access_denied') throw new ClientError('the login was refused in the browser', EXIT.AUTH);
    throw oauthError(body, status);
  }
}

/** Exchanges an access token of the server's provider for a lading login. */
export async function exchange(server: string, accessToken: string, ttlSeconds: number | null, refreshToken?: string): Promise<Login> {
  const data = await envelopeData<{ token: string; storage_user: string; storage_home: string }>(await call(`${server}/auth/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ access_token: accessToken }),
  }));
  return {
    token: data.token, user: data.storage_user, home: data.storage_home,
    ...(ttlSeconds ? { expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() } : {}),
    ...(refreshToken ? { refreshToken } : {}),
  };
}

/**
 * A new lading login from the provider's refresh token: the provider issues a new access token
 * (and perhaps a new refresh token), which is exchanged. `ClientError(AUTH)` saying to log in
 * again when the provider no longer accepts the refresh token.
 */
export async function refreshLogin(server: string, refreshToken: string): Promise<Login> {
  const info = await cliClient(server);
  const { status, body } = await form(info.token_endpoint, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: info.client_id });
  if (status !== 200 || typeof body.access_token !== 'string') {
    if (body.error === 'invalid_grant') throw new ClientError(`the login to ${server} has expired: run 'lading login ${server}'`, EXIT.AUTH, { status });
    throw oauthError(body, status);
  }
  return exchange(server, body.access_token, info.token_ttl, typeof body.refresh_token === 'string' ? body.refresh_token : refreshToken);
}

/** Revokes a refresh token at the provider (RFC 7009); failures are only reported. */
export async function revokeRefreshToken(server: string, refreshToken: string): Promise<boolean> {
  try {
    const info = await cliClient(server);
    if (!info.revocation_endpoint) return false;
    const { status } = await form(info.revocation_endpoint, { token: refreshToken, token_type_hint: 'refresh_token', client_id: info.client_id });
    return status === 200;
  } catch {
    return false;
  }
}
