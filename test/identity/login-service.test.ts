/**
 * The login service on its own: one audit line per attempt that names user, address and door
 * but never the password, the same refusal for unknown users and wrong passwords, a success
 * that clears the account's failure count from its address, and counters of past windows
 * removed as failures come.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import type { Catalog } from '../../src/core/ports.ts';
import { systemClock } from '../../src/core/ports.ts';
import { hashPassword } from '../../src/identity/secrets/password.ts';
import { LoginService } from '../../src/identity/sessions/login.ts';

let dir: string;
let catalog: Catalog;
const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
const logger = {
  info: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'info', fields, message }),
  warn: (fields: Record<string, unknown>, message: string) => lines.push({ level: 'warn', fields, message }),
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lading-login-'));
  catalog = createSqliteCatalog({ file: join(dir, 'catalog.sqlite') });
  await catalog.createUser({ name: 'frank', kind: 'user', passwordHash: await hashPassword('frank-secret'), createdAt: new Date() });
});

after(async () => {
  await catalog?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('LoginService', () => {
  it('logs one line per attempt with user, address and door, never the password', async () => {
    const login = new LoginService({ catalog, clock: systemClock, logger, maxFailedLogins: 5 });
    lines.length = 0;
    await assert.rejects(login.verify({ username: 'frank', password: 'guess-one', address: '192.0.2.7', via: 'api' }), { code: 'UNAUTHENTICATED' });
    await assert.rejects(login.verify({ username: 'nobody', password: 'guess-two', address: '192.0.2.7', via: 'browser' }), { code: 'UNAUTHENTICATED' });
    assert.equal(await login.verify({ username: 'frank', password: 'frank-secret', address: '192.0.2.7', via: 'api' }), 'frank');
    assert.deepEqual(lines.map((l) => [l.level, l.fields.user, l.fields.address, l.fields.via]), [
      ['warn', 'frank', '192.0.2.7', 'api'],
      ['warn', 'nobody', '192.0.2.7', 'browser'],
      ['info', 'frank', '192.0.2.7', 'api'],
    ]);
    const text = JSON.stringify(lines);
    for (const secret of ['guess-one', 'guess-two', 'frank-secret']) assert.ok(!text.includes(secret), `${secret} is not logged`);
  });

  it('clears the count of the account from that address on success, so earlier failures there do not add up to a lockout', async () => {
    const login = new LoginService({ catalog, clock: systemClock, logger, maxFailedLogins: 2 });
    const attempt = { username: 'frank', address: '198.51.100.1', via: 'api' as const };
    await assert.rejects(login.verify({ ...attempt, password: 'x' }), { code: 'UNAUTHENTICATED' });
    await login.verify({ ...attempt, password: 'frank-secret' });
    await assert.rejects(login.verify({ ...attempt, password: 'y' }), { code: 'UNAUTHENTICATED' });
    assert.equal(await login.verify({ ...attempt, password: 'frank-secret' }), 'frank');
    await assert.rejects(login.verify({ ...attempt, password: 'z1' }), { code: 'UNAUTHENTICATED' });
    await assert.rejects(login.verify({ ...attempt, password: 'z2' }), { code: 'UNAUTHENTICATED' });
    await assert.rejects(login.verify({ ...attempt, password: 'frank-secret' }), (err: { code: string; details: { retryAfter: number } }) => {
      assert.equal(err.code, 'TOO_MANY_REQUESTS');
      assert.ok(err.details.retryAfter > 0 && err.details.retryAfter <= 15 * 60);
      return true;
    });
  });

  it('removes the counters of past windows as failures come, so guessed names do not pile up in the catalog', async () => {
    let at = Date.now();
    const clock = { now: () => new Date(at) };
    const login = new LoginService({ catalog, clock, logger, maxFailedLogins: 5 });
    for (let i = 0; i < 3; i++) {
      await assert.rejects(login.verify({ username: `guess-${i}`, password: 'x', address: '203.0.113.50', via: 'api' }), { code: 'UNAUTHENTICATED' });
    }
    at += 16 * 60_000;
    await assert.rejects(login.verify({ username: 'guess-next', password: 'x', address: '203.0.113.51', via: 'api' }), { code: 'UNAUTHENTICATED' });
    assert.equal(await catalog.oidcDeleteExpired(clock.now()), 0, 'the counters of the past window are gone');
    // The current window's still count.
    assert.equal((await catalog.oidcCount('login-fail:address:203.0.113.51', clock.now(), 900, false)).count, 1);
  });
});
