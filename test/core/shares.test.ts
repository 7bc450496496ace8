/**
 * The share-link service on a real SQLite catalog and file resource: who may create, list and
 * revoke links; what opening a link checks on every request (token, password, expiry, uses,
 * the entity, the creator's access); what a read link and a drop box let their holder do; the
 * uses they take; the abuse limits; and what the audit lines and answers never show.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { type Actor, Backend } from '../../src/core/backend.ts';
import { isLadingError } from '../../src/core/errors.ts';
import { type Path, ROOT, parsePath } from '../../src/core/path.ts';
import type { Catalog, Resource } from '../../src/core/ports.ts';
import { type ShareLimits, ShareService } from '../../src/core/shares.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';
import { trustedAuthority } from '../helpers/trusted.ts';

const p = parsePath;
const LIMITS: ShareLimits = {
  maxActivePerUser: 50, requestWindowSeconds: 60, requestsPerLink: 1000, requestsPerAddress: 1000, maxFailedPasswords: 3, passwordWindowSeconds: 900,
  expiredRetentionSeconds: 86400, dropMaxBytes: 10 * 1024 ** 3,
};

/** A clock the test moves. */
class TestClock {
  t = Date.parse('2026-03-01T10:00:00Z');
  now(): Date {
    return new Date(this.t);
  }
  advance(seconds: number): void {
    this.t += seconds * 1000;
  }
}

/** Audit lines as logged. */
class Lines {
  lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  info(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'info', fields, message });
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'warn', fields, message });
  }
}

async function text(stream: Readable | null): Promise<string> {
  assert.ok(stream, 'a stream');
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('share service', () => {
  let dir: string;
  let catalog: Catalog;
  let resource: Resource;
  let backend: Backend;
  let clock: TestClock;
  let log: Lines;
  let verifications: number;
  let alice: Actor;
  let bob: Actor;
  let root: Actor;
  let n = 0;
  const home = (user: string, rest = '') => p(`/z/home/${user}${rest ? `/${rest}` : ''}`);
  const service = (limits: Partial<ShareLimits> = {}) => new ShareService({
    backend, catalog, clock, log,
    passwords: {
      hash: async (pw) => `hashed:${pw}`,
      verify: async (pw, hash) => {
        verifications++;
        return hash === `hashed:${pw}`;
      },
    },
    limits: { ...LIMITS, ...limits },
  });
  const put = async (actor: Actor, path: Path, body: string) => backend.uploadAs(actor, path, Readable.from([Buffer.from(body)]), { overwrite: true });
  const client = (password: string | null = null) => ({ password, address: `10.0.0.${++n % 250}` });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-shares-'));
    catalog = createSqliteCatalog({ file: join(dir, 'c.sqlite') });
    resource = await createFsResource({ root: join(dir, 'r') });
    clock = new TestClock();
    backend = new Backend({ catalog, resource, authority: trustedAuthority, clock, zone: 'z', maxUploadBytes: 1 << 20 });
    await backend.init(new Date(0));
    for (const name of ['alice', 'bob', 'carol']) await backend.addUser(name);
    await backend.addUser('root', { kind: 'admin' });
    alice = await backend.actorOf({ kind: 'trusted', user: 'alice' });
    bob = await backend.actorOf({ kind: 'trusted', user: 'bob' });
    root = await backend.actorOf({ kind: 'trusted', user: 'root' });
    await backend.createCollection({ kind: 'trusted', user: 'alice' }, home('alice', 'data/run1'), { parents: true });
    await put(alice, home('alice', 'data/run1/reads.txt'), 'ACGTACGTAC');
    await put(alice, home('alice', 'data/notes.txt'), 'notes');
    await backend.createCollection({ kind: 'trusted', user: 'alice' }, home('alice', 'inbox'), { parents: false });
  });
  after(async () => {
    await resource.close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    log = new Lines();
    verifications = 0;
  });

  describe('creating, listing and revoking', () => {
    it('makes a 256-bit base64url token, keeps only its SHA-256, and logs who shared what without the token', async () => {
      const shares = service();
      const { view, token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read', password: 'secret' });
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      const stored = await catalog.getShare(view.share.id);
      assert.equal(stored?.tokenHash, createHash('sha256').update(token).digest('hex'));
      assert.equal(stored?.passwordHash, 'hashed:secret');
      assert.deepEqual({ path: view.path, state: view.state, creator: view.share.creator, uses: view.share.uses }, { path: home('alice', 'data'), state: 'active', creator: 'alice', uses: 0 });
      const line = log.lines.find((l) => l.message === 'share link created');
      assert.deepEqual(line?.fields, {
        user: 'alice', creator: 'alice', path: '/z/home/alice/data', kind: 'read', share: view.share.id, expiresAt: null, maxUses: null, passwordProtected: true,
      });
      assert.ok(!JSON.stringify(log.lines).includes(token), 'no token in the audit lines');
      assert.ok(!JSON.stringify(log.lines).includes('secret'), 'no password in the audit lines');
    });

    it('needs own on the entity, whether or not it exists, and refuses what cannot work', async () => {
      const shares = service();
      await rejectsWith(shares.create(bob, { path: home('alice', 'data'), kind: 'read' }), 'FORBIDDEN');
      await rejectsWith(shares.create(bob, { path: home('alice', 'nothing'), kind: 'read' }), 'FORBIDDEN');
      await rejectsWith(shares.create(alice, { path: home('alice', 'nothing'), kind: 'read' }), 'NOT_FOUND');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data/notes.txt'), kind: 'upload' }), 'NOT_A_COLLECTION');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', expiresAt: clock.now() }), 'BAD_REQUEST');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', expiresAt: new Date(Number.NaN) }), 'BAD_REQUEST');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', expiresAt: new Date(clock.t + 1000), expiresIn: 10 }), 'BAD_REQUEST');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', maxUses: 0 }), 'BAD_REQUEST');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', maxUses: 1.5 }), 'BAD_REQUEST');
      await rejectsWith(shares.create(alice, { path: home('alice', 'data'), kind: 'read', password: '' }), 'BAD_REQUEST');
      // A collection the zone owns: an admin's link would act as its owner, who is no user.
      await rejectsWith(shares.create(root, { path: p('/z/home'), kind: 'read' }), 'FORBIDDEN');
    });

    it('makes a link an admin creates act as the entity\'s owner, never with an admin\'s powers', async () => {
      const shares = service();
      const { view, token } = await shares.create(root, { path: home('alice', 'data/notes.txt'), kind: 'read' });
      assert.equal(view.share.creator, 'alice');
      assert.equal(log.lines[0]?.fields.user, 'root');
      const access = await shares.open(token, client());
      assert.equal((await shares.entry(access, ROOT)).name, 'notes.txt');
      assert.ok((await shares.listMine(alice)).some((v) => v.share.id === view.share.id), 'listed among the owner\'s links');
    });

    it('lists the links of an entity to its owners only, and a user\'s own links', async () => {
      const shares = service();
      const a = await shares.create(alice, { path: home('alice', 'inbox'), kind: 'upload' });
      await backend.setAccess({ kind: 'trusted', user: 'alice' }, home('alice', 'inbox'), 'bob', 'own');
      const b = await shares.create(bob, { path: home('alice', 'inbox'), kind: 'read' });
      assert.deepEqual((await shares.listOf(alice, home('alice', 'inbox'))).map((v) => v.share.id), [a.view.share.id, b.view.share.id]);
      assert.ok((await shares.listMine(bob)).every((v) => v.share.creator === 'bob'));
      assert.ok((await shares.listMine(bob)).some((v) => v.share.id === b.view.share.id));
      await rejectsWith(service().listOf(await backend.actorOf({ kind: 'trusted', user: 'carol' }), home('alice', 'inbox')), 'FORBIDDEN');
      await backend.setAccess({ kind: 'trusted', user: 'alice' }, home('alice', 'inbox'), 'bob', null);
    });

    it('lets the creator, an owner of the entity or an admin revoke, and nobody else; revoking ends the link at once', async () => {
      const shares = service();
      const links = await Promise.all([1, 2, 3].map(() => shares.create(alice, { path: home('alice', 'data'), kind: 'read' })));
      const carol = await backend.actorOf({ kind: 'trusted', user: 'carol' });
      await rejectsWith(shares.revoke(carol, links[0]!.view.share.id), 'NOT_FOUND');
      await rejectsWith(shares.revoke(carol, 'no-such-id'), 'NOT_FOUND');
      assert.equal((await shares.open(links[0]!.token, client())).kind, 'read', 'still works');
      assert.equal((await shares.revoke(alice, links[0]!.view.share.id)).share.id, links[0]!.view.share.id);
      await rejectsWith(shares.open(links[0]!.token, client()), 'NOT_FOUND');
      await backend.setAccess({ kind: 'trusted', user: 'alice' }, home('alice', 'data'), 'carol', 'own');
      await shares.revoke(carol, links[1]!.view.share.id);
      await backend.setAccess({ kind: 'trusted', user: 'alice' }, home('alice', 'data'), 'carol', null);
      await shares.revoke(root, links[2]!.view.share.id);
      for (const link of links) await rejectsWith(shares.open(link.token, client()), 'NOT_FOUND');
      const revoked = log.lines.filter((l) => l.message === 'share link revoked').map((l) => l.fields.user);
      assert.deepEqual(revoked, ['alice', 'carol', 'root']);
    });
  });

  describe('opening a link', () => {
    it('refuses an unknown token, and a link that expired (410) the moment it did', async () => {
      const shares = service();
      await rejectsWith(shares.open('not-a-token', client()), 'NOT_FOUND');
      const { token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read', expiresIn: 60 });
      clock.advance(59);
      await shares.open(token, client());
      clock.advance(1);
      await rejectsWith(shares.open(token, client()), 'GONE');
    });

    it('keeps an expired link (410, listed as expired) for shares.expired_retention, then removes it (404)', async () => {
      const shares = service();
      const { view, token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read', expiresIn: 60 });
      const lasting = await shares.create(alice, { path: home('alice', 'data'), kind: 'read' });
      clock.advance(60);
      await shares.purgeExpired(clock.now());
      await rejectsWith(shares.open(token, client()), 'GONE');
      clock.advance(86400);
      await shares.purgeExpired(clock.now());
      assert.ok(await catalog.getShare(view.share.id), 'kept until the retention has passed');
      assert.equal((await shares.listMine(alice)).find((v) => v.share.id === view.share.id)?.state, 'expired');
      clock.advance(1);
      assert.ok(await shares.purgeExpired(clock.now()) >= 1);
      assert.equal(await catalog.getShare(view.share.id), null);
      await rejectsWith(shares.open(token, client()), 'NOT_FOUND');
      assert.equal((await shares.listMine(alice)).some((v) => v.share.id === view.share.id), false);
      await shares.open(lasting.token, client());
    });

    it('follows its entity through renames', async () => {
      const shares = service();
      await backend.createCollection({ kind: 'trusted', user: 'alice' }, home('alice', 'before'), { parents: false });
      await put(alice, home('alice', 'before/x.txt'), 'x');
      const { token } = await shares.create(alice, { path: home('alice', 'before'), kind: 'read' });
      await backend.rename({ kind: 'trusted', user: 'alice' }, home('alice', 'before'), 'after');
      const access = await shares.open(token, client());
      assert.equal(access.root.path, home('alice', 'after'));
      assert.deepEqual((await shares.list(access, ROOT)).children.map((e) => e.name), ['x.txt']);
      assert.deepEqual((await shares.listMine(alice)).find((v) => v.path === home('alice', 'after'))?.state, 'active');
    });

    it('leads nowhere (404) once its creator loses the access it grants, is disabled, or its entity is gone', async () => {
      const shares = service();
      await backend.createCollection({ kind: 'trusted', user: 'bob' }, home('bob', 'joint'), { parents: false });
      await backend.setAccess({ kind: 'trusted', user: 'bob' }, home('bob', 'joint'), 'alice', 'own');
      const read = await shares.create(alice, { path: home('bob', 'joint'), kind: 'read' });
      const drop = await shares.create(alice, { path: home('bob', 'joint'), kind: 'upload' });
      await backend.setAccess({ kind: 'trusted', user: 'bob' }, home('bob', 'joint'), 'alice', 'read');
      await shares.open(read.token, client());
      await rejectsWith(shares.open(drop.token, client()), 'NOT_FOUND');
      await backend.setAccess({ kind: 'trusted', user: 'bob' }, home('bob', 'joint'), 'alice', null);
      await rejectsWith(shares.open(read.token, client()), 'NOT_FOUND');

      const mine = await shares.create(alice, { path: home('alice', 'data'), kind: 'read' });
      await catalog.setDisabled('alice', true);
      await rejectsWith(shares.open(mine.token, client()), 'NOT_FOUND');
      await catalog.setDisabled('alice', false);
      await shares.open(mine.token, client());

      const withoutEntity = new ShareService({
        backend, clock, log, limits: LIMITS, passwords: { hash: async (x) => x, verify: async () => true },
        catalog: { ...catalog, getEntityById: async () => null },
      });
      await rejectsWith(withoutEntity.open(mine.token, client()), 'NOT_FOUND');
      assert.equal((await withoutEntity.listMine(alice)).find((v) => v.share.id === mine.view.share.id)?.state, 'gone');
    });

    it('asks for a password (not counted when none is sent), refuses a wrong one, and runs scrypt once for many requests', async () => {
      const shares = service();
      const { token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read', password: 'right' });
      for (let i = 0; i < LIMITS.maxFailedPasswords + 2; i++) {
        await assert.rejects(shares.open(token, client()), (err) => isLadingError(err, 'UNAUTHENTICATED') && err.details.passwordRequired === true);
      }
      await assert.rejects(shares.open(token, client('wrong')), (err) => isLadingError(err, 'UNAUTHENTICATED') && err.details.passwordRequired === true);
      const before = verifications;
      for (let i = 0; i < 5; i++) await shares.open(token, client('right'));
      assert.equal(verifications - before, 1, 'the right password is verified once, then remembered');
      assert.ok(log.lines.some((l) => l.message === 'share link: wrong password'));
      assert.ok(!JSON.stringify(log.lines).includes('wrong"'), 'the wrong password is not logged');
    });
  });

  describe('a read link', () => {
    it('reads the shared collection and below it only, and says paths relative to it', async () => {
      const shares = service();
      const { token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read' });
      const access = await shares.open(token, client());
      assert.deepEqual((await shares.list(access, ROOT)).children.map((e) => access.relative(e)), ['/notes.txt', '/run1']);
      assert.deepEqual((await shares.list(access, p('/run1'))).children.map((e) => access.relative(e)), ['/run1/reads.txt']);
      const opened = await shares.openObject(access, p('/run1/reads.txt'), () => ({ range: { start: 2, end: 5 } }));
      assert.equal(await text(opened.stream), 'GTAC');
      await assert.rejects(shares.entry(access, p('/run1/missing.txt')), (err) =>
        isLadingError(err, 'NOT_FOUND') && !err.message.includes('/z/home/alice') && err.message.includes('/run1/missing.txt'));
      await rejectsWith(shares.upload(access, 'x.txt', Readable.from([Buffer.from('x')])), 'FORBIDDEN');
      assert.equal(await catalog.getEntity(home('alice', 'data/x.txt')), null);
    });

    it('to a data object has no members', async () => {
      const shares = service();
      const { token } = await shares.create(alice, { path: home('alice', 'data/notes.txt'), kind: 'read' });
      const access = await shares.open(token, client());
      assert.equal((await shares.entry(access, ROOT)).name, 'notes.txt');
      await rejectsWith(shares.entry(access, p('/notes.txt')), 'NOT_FOUND');
    });

    it('takes a use for each answer with bytes (a range too), none without, and none beyond its limit, racing or not', async () => {
      const shares = service();
      const { view, token } = await shares.create(alice, { path: home('alice', 'data/notes.txt'), kind: 'read', maxUses: 2 });
      const access = await shares.open(token, client());
      const head = await shares.openObject(access, ROOT, () => ({ skipBody: true }));
      assert.equal(head.stream, null);
      assert.equal((await catalog.getShare(view.share.id))?.uses, 0, 'HEAD and 304 take no use');
      await text((await shares.openObject(access, ROOT, () => ({ range: { start: 0, end: 0 } }))).stream);
      const racing = await Promise.allSettled([1, 2, 3].map(() => shares.openObject(access, ROOT, () => ({}))));
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1, 'one of three racing downloads takes the last use');
      for (const r of racing) {
        if (r.status === 'fulfilled') await text(r.value.stream);
        else assert.ok(isLadingError(r.reason, 'GONE'));
      }
      await rejectsWith(shares.open(token, client()), 'GONE');
    });
  });

  describe('a drop box', () => {
    it('stores new files directly inside, owned by the creator, never over an existing one, and cannot list or download', async () => {
      const shares = service();
      const { view, token } = await shares.create(alice, { path: home('alice', 'inbox'), kind: 'upload', maxUses: 3 });
      const access = await shares.open(token, client());
      const object = await shares.upload(access, 'result.csv', Readable.from([Buffer.from('a,b\n')]));
      assert.equal(object.owner, 'alice');
      assert.equal(object.path, home('alice', 'inbox/result.csv'));
      assert.deepEqual(log.lines.find((l) => l.message === 'share link deposit')?.fields,
        { share: view.share.id, creator: 'alice', path: '/z/home/alice/inbox/result.csv', size: 4 });
      await assert.rejects(shares.upload(access, 'result.csv', Readable.from([Buffer.from('other')])), (err) =>
        isLadingError(err, 'CONFLICT') && !err.message.includes('/z/home'));
      await rejectsWith(shares.upload(access, 'a/b.csv', Readable.from([Buffer.from('x')])), 'INVALID_PATH');
      await rejectsWith(shares.upload(access, '..', Readable.from([Buffer.from('x')])), 'INVALID_PATH');
      await rejectsWith(shares.upload(access, 'bad.csv', Readable.from([Buffer.from('x')]), { expected: { sha256: Buffer.alloc(32) } }), 'DIGEST_MISMATCH');
      assert.equal((await catalog.getShare(view.share.id))?.uses, 1, 'refused uploads take no use');
      await rejectsWith(shares.entry(access, ROOT), 'FORBIDDEN');
      await rejectsWith(shares.list(access, ROOT), 'FORBIDDEN');
      await rejectsWith(shares.openObject(access, p('/result.csv'), () => ({})), 'FORBIDDEN');
      await shares.upload(access, 'two.csv', Readable.from([Buffer.from('2')]));
      await shares.upload(access, 'three.csv', Readable.from([Buffer.from('3')]));
      await rejectsWith(shares.upload(access, 'four.csv', Readable.from([Buffer.from('4')])), 'GONE');
      assert.equal(await catalog.getEntity(home('alice', 'inbox/four.csv')), null);
      await rejectsWith(shares.open(token, client()), 'GONE');
    });
  });

  describe('abuse limits', () => {
    it('refuses a user\'s link beyond the active ones allowed, with the time until one expires', async () => {
      const shares = service({ maxActivePerUser: 2 });
      await backend.addUser('dora');
      const dora = await backend.actorFor('dora');
      await put(dora, home('dora', 'f.txt'), 'f');
      await shares.create(dora, { path: home('dora'), kind: 'read', expiresIn: 120 });
      const once = await shares.create(dora, { path: home('dora', 'f.txt'), kind: 'read', maxUses: 1 });
      await assert.rejects(shares.create(dora, { path: home('dora'), kind: 'read' }), (err) =>
        isLadingError(err, 'TOO_MANY_REQUESTS') && err.details.retryAfter === 120);
      // Used-up and expired links are no longer active.
      await text((await shares.openObject(await shares.open(once.token, client()), ROOT, () => ({}))).stream);
      await shares.create(dora, { path: home('dora'), kind: 'read' });
      await rejectsWith(shares.create(dora, { path: home('dora'), kind: 'upload' }), 'TOO_MANY_REQUESTS');
      clock.advance(120);
      await shares.create(dora, { path: home('dora'), kind: 'upload' });
      assert.ok(log.lines.some((l) => l.message === 'share link refused: too many active links'));
      await rejectsWith(service({ maxActivePerUser: 0 }).create(alice, { path: home('alice', 'data'), kind: 'read' }), 'FORBIDDEN');
    });

    it('counts requests per link and per address in fixed windows, answering with the time left', async () => {
      const shares = service({ requestsPerLink: 3, requestWindowSeconds: 60 });
      const a = await shares.create(alice, { path: home('alice', 'data'), kind: 'read' });
      for (let i = 0; i < 3; i++) await shares.open(a.token, client());
      clock.advance(20);
      await assert.rejects(shares.open(a.token, client()), (err) => isLadingError(err, 'TOO_MANY_REQUESTS') && err.details.retryAfter === 40);
      clock.advance(40);
      await shares.open(a.token, client());

      const perAddress = service({ requestsPerAddress: 5, requestWindowSeconds: 60 });
      const from = { password: null, address: '192.0.2.7' };
      const b = await perAddress.create(alice, { path: home('alice', 'data'), kind: 'read' });
      for (let i = 0; i < 4; i++) await perAddress.open(b.token, from);
      await rejectsWith(perAddress.open('unknown-token', from), 'NOT_FOUND');
      await rejectsWith(perAddress.open(b.token, from), 'TOO_MANY_REQUESTS');
      await rejectsWith(perAddress.open('unknown-token', from), 'TOO_MANY_REQUESTS');
      await perAddress.open(b.token, client());
    });

    it('refuses every attempt from an address, the right password too, once it sent too many wrong ones; and from everyone once the link had five times as many', async () => {
      const shares = service({ maxFailedPasswords: 3, passwordWindowSeconds: 900 });
      const { token } = await shares.create(alice, { path: home('alice', 'data'), kind: 'read', password: 'right' });
      const guesser = (password: string) => ({ password, address: '192.0.2.99' });
      for (let i = 0; i < 3; i++) await rejectsWith(shares.open(token, guesser(`wrong-${i}`)), 'UNAUTHENTICATED');
      await assert.rejects(shares.open(token, guesser('right')), (err) => isLadingError(err, 'TOO_MANY_REQUESTS') && err.details.retryAfter === 900);
      assert.ok(log.lines.some((l) => l.message === 'share link refused: too many wrong passwords'));
      await shares.open(token, client('right'));
      // 3 from the guesser and 12 from other addresses: 15, the link's bound.
      for (let i = 0; i < 12; i++) await rejectsWith(shares.open(token, client(`wrong-${i}`)), 'UNAUTHENTICATED');
      await assert.rejects(shares.open(token, client('right')), (err) => isLadingError(err, 'TOO_MANY_REQUESTS') && err.details.retryAfter === 900);
      clock.advance(900);
      await shares.open(token, client('right'));
      await shares.open(token, guesser('right'));
    });
  });
});
