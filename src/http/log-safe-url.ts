/**
 * URLs as they may appear in the log: without the secrets OpenID Connect and share links put
 * in them. Used by the request log, the shutdown report and the logger's serializer.
 */
const SECRET_PARAMS = new Set(['code', 'state', 'nonce', 'code_verifier', 'token', 'access_token', 'id_token', 'refresh_token', 'client_secret', 'password']);

/**
 * `given` with the values of secret-bearing query parameters (authorization codes, tokens) and
 * the token of a share link's path replaced, for log lines.
 */
export function logSafeUrl(given: string): string {
  // NOTE: a share link's token is its path's segment after /api/shared/.
  const url = given.replace(/^((?:https?:\/\/[^/?#]*)?\/api\/shared\/)[^/?#]+/i, '$1[redacted]');
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()]) if (SECRET_PARAMS.has(key)) params.set(key, '[redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}
