/**
 * The pieces of `core/fixity.ts` on their own: one object's check against a real file
 * resource (whole, other bytes, more or fewer bytes, gone, a store that fails), and the pace
 * that bounds the audit's reading.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LadingError } from '../../src/core/errors.ts';
import { FixityAudit, MISSING_REASON, pacer, verifyObject } from '../../src/core/fixity.ts';
import type { FixityStore, Resource, StoredObject } from '../../src/core/ports.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';

const checksum = (b: Buffer) => `sha2:${createHash('sha256').update(b).digest('base64')}`;

describe('fixity: one object\'s check', () => {
  let dir: string;
  let r: Resource;
  const bytes = Buffer.from('the bytes as they were stored');
  const object = (extra: Partial<StoredObject> = {}): StoredObject => ({
    id: 'id', path: '/z/f', size: bytes.length, checksum: checksum(bytes), blob: 'key-fixity01', verifiedAt: null, damaged: null, ...extra,
  });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-fixity-'));
    r = await createFsResource({ root: dir, fsync: false });
    await r.write('key-fixity01', Readable.from([bytes]));
  });
  after(async () => {
    await r.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('finds whole bytes ok, reading them through the pace', async () => {
    let paced = 0;
    assert.deepEqual(await verifyObject(r, object(), async (n) => { paced += n; }), { kind: 'ok' });
    assert.equal(paced, bytes.length);
  });

  it('finds other bytes, more bytes and fewer bytes damaged, saying what differs', async () => {
    const other = await verifyObject(r, object({ checksum: checksum(Buffer.from('other')) }));
    assert.equal(other.kind, 'damaged');
    assert.match(other.kind === 'damaged' ? other.reason : '', /^SHA-256 sha2:\S+ where sha2:\S+ was recorded$/);
    assert.deepEqual(await verifyObject(r, object({ size: bytes.length - 1 })), { kind: 'damaged', reason: `more than the ${bytes.length - 1} bytes recorded` });
    assert.deepEqual(await verifyObject(r, object({ size: bytes.length + 1 })), { kind: 'damaged', reason: `${bytes.length} of the ${bytes.length + 1} bytes recorded` });
  });

  it('finds bytes that are gone missing, and rejects, finding nothing, when the store fails', async () => {
    assert.deepEqual(await verifyObject(r, object({ blob: 'key-fixity02' })), { kind: 'missing', reason: MISSING_REASON });
    const down: Resource = { ...r, read: async () => { throw new LadingError('UNAVAILABLE', 'The store is down.'); } };
    await assert.rejects(verifyObject(down, object()), { code: 'UNAVAILABLE' });
  });
});

describe('fixity: the pace', () => {
  it('lets a second\'s worth through at once, then waits as long as the rest takes at the rate', async () => {
    const waits: number[] = [];
    let ms = 0;
    const pace = pacer(1000, async (wait) => { waits.push(wait); ms += wait; }, () => ms);
    await pace(1000);
    assert.deepEqual(waits, [], 'within the first second\'s allowance');
    await pace(500);
    assert.deepEqual(waits, [500], 'half a second for 500 bytes at 1000 a second');
    ms += 250;
    await pace(500);
    assert.deepEqual(waits, [500, 250], 'a quarter second of reading elsewhere counts');
    ms += 10_000;
    await pace(1000);
    assert.deepEqual(waits, [500, 250], 'idle time fills the allowance up to one second only');
    await pace(1);
    assert.equal(waits.length, 3);
  });

  it('never waits without a bound', async () => {
    const pace = pacer(Infinity, async () => assert.fail('no wait'));
    await pace(1e12);
  });
});

describe('fixity: the audit loop', () => {
  let dir: string;
  let r: Resource;
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  const object: StoredObject = { id: 'id', path: '/z/big', size: big.length, checksum: checksum(big), blob: 'key-fixity03', verifiedAt: null, damaged: null };
  /** A catalog that hands out `object` once and keeps what is recorded. */
  const store = () => {
    const recorded: (string | null)[] = [];
    let handed = false;
    let recordedOne: () => void = () => {};
    const settled = new Promise<void>((resolve) => { recordedOne = resolve; });
    const catalog = {
      claimFixity: async () => (handed ? [] : (handed = true, [object])),
      recordFixity: async ({ damage }: { damage: string | null }) => {
        recorded.push(damage);
        recordedOne();
        return { ...object, damaged: null };
      },
    } as unknown as FixityStore;
    return { catalog, recorded, settled };
  };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-fixity-'));
    r = await createFsResource({ root: dir, fsync: false });
    await r.write('key-fixity03', Readable.from([big]));
  });
  after(async () => {
    await r.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('checks what is due once started, and records it', async () => {
    const { catalog, recorded, settled } = store();
    const audit = new FixityAudit({ catalog, resource: r, clock: { now: () => new Date() }, holder: 'n1', bytesPerSecond: 0, intervalMs: 1000 });
    audit.start();
    await settled;
    await audit.stop();
    assert.deepEqual(recorded, [null]);
  });

  it('stops between two chunks of a large object, recording nothing of it', async () => {
    const { catalog, recorded } = store();
    let waiting: () => void = () => {};
    const paused = new Promise<void>((resolve) => { waiting = resolve; });
    let release: () => void = () => {};
    const audit = new FixityAudit({
      catalog, resource: r, clock: { now: () => new Date() }, holder: 'n1', bytesPerSecond: 1024, intervalMs: 1000,
      sleep: () => new Promise<void>((resolve) => { release = resolve; waiting(); }),
    });
    audit.start();
    await paused;
    const stopping = audit.stop();
    release();
    await stopping;
    assert.deepEqual(recorded, [], 'the object stays claimed, to be checked later');
  });
});
