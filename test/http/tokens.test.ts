/**
 * Bearer tokens: stored only as a hash, expiring after `auth.token_ttl`, revocable.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, json } from '../helpers/server.ts';
import type { Clock } from '../../src/core/ports.ts';

describe('bearer tokens', () => {
  it('expire after auth.token_ttl, are stored only hashed, and can be revoked', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => new Date(now) };
    const s = await startTestServer({ 'auth.token_ttl': 60 }, { overrides: { clock } });
    try {
      await s.addUser('hana');
      const token = await s.login('hana');
      const list = () => fetch(`${s.home('hana')}/`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await list()).status, 200);
      const stored = await s.deps.catalog.getSession(createHash('sha256').update(token).digest('hex'), new Date(now));
      assert.ok(stored, 'the session is found by the token\'s hash');
      for (const file of ['catalog.sqlite', 'catalog.sqlite-wal']) {
        const bytes = await readFile(join(s.dataDir, file)).catch(() => Buffer.alloc(0));
        assert.equal(bytes.includes(Buffer.from(token)), false, `the token itself is not in ${file}`);
      }
      now += 59_000;
      assert.equal((await list()).status, 200);
      now += 2_000;
      const expired = await list();
      assert.equal(expired.status, 401);
      assert.match(expired.headers.get('www-authenticate') ?? '', /invalid_token/);
      assert.equal((await json(expired)).Meta.status, 401);

      const second = await s.login('hana');
      const out = await fetch(`${s.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${second}` } });
      assert.equal(out.status, 200);
      assert.equal((await fetch(`${s.home('hana')}/`, { headers: { authorization: `Bearer ${second}` } })).status, 401, 'a revoked token no longer works');
    } finally {
      await s.stop();
    }
  });
});
