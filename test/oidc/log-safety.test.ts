/** Authorization codes and tokens in query strings never reach a log line. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { logSafeUrl } from '../../src/http/routes-oidc.ts';

it('cuts codes, states and tokens out of logged URLs and keeps the rest', () => {
  const logged = logSafeUrl('/auth/callback?code=abc123&state=st4te&iss=https%3A%2F%2Fidp.example&session_state=x');
  assert.ok(!logged.includes('abc123'));
  assert.ok(!logged.includes('st4te'));
  assert.match(logged, /^\/auth\/callback\?/);
  assert.match(logged, /iss=https%3A%2F%2Fidp.example/);
  assert.match(logged, /session_state=x/);
  assert.equal(logSafeUrl('/api/status'), '/api/status');
  assert.ok(!logSafeUrl('/x?access_token=t0k&id_token=i&refresh_token=r&client_secret=s').match(/t0k|=i&|=r&|=s$/));
});
