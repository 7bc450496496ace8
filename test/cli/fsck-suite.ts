/**
 * Fixity on one deployment, as an operator meets it: stored bytes damaged behind lading's back
 * (a flipped byte, a lost file or object, bytes no object refers to) are found by the
 * background audit on a test clock and by `lading fsck`, marked so that downloads on every
 * front fail instead of serving them, counted in the metrics, repaired where that is safe
 * (orphans), and cleared by an upload. Run against the embedded defaults (`fsck.test.ts`) and
 * PostgreSQL with S3 (`fsck-postgres-s3.test.ts`), which give how to damage their store.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { FixityAudit } from '../../src/core/fixity.ts';
import { parsePath } from '../../src/core/path.ts';
import type { Clock } from '../../src/core/ports.ts';
import type { DataObject } from '../../src/core/types.ts';
import { envName } from '../../src/wiring/config.ts';
import { scrape } from '../helpers/prometheus.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { runLading } from './run-lading.ts';

/** How a test damages the bytes of one deployment's store, behind lading's back. */
export interface StoreDamage {
  /** Changes one byte of the bytes stored under `key`. */
  flipByte(s: TestServer, key: string): Promise<void>;
  /** Removes the bytes stored under `key`. */
  remove(s: TestServer, key: string): Promise<void>;
  /** Stores `bytes` under `key`, no object's, written long enough ago to count as an orphan for the `fsck` run with `fsckEnv`. */
  addOrphan(s: TestServer, key: string, bytes: Buffer): Promise<void>;
  /** Stores bytes under `key` as a write that has only just happened (never an orphan yet); absent where the store cannot tell the two apart by age in a test. */
  addYoungKey?(s: TestServer, key: string, bytes: Buffer): Promise<void>;
  /** Whether the store holds bytes under `key`. */
  holds(s: TestServer, key: string): Promise<boolean>;
}

const DAY = 86_400_000;

export function fsckSuite(name: string, flags: Record<string, string>, damage: StoreDamage, options: { fsckEnv?: Record<string, string>; cleanup?: () => Promise<void> } = {}): void {
  describe(`fixity on ${name}`, { timeout: 180_000 }, () => {
    let s: TestServer;
    let alice: string;
    const bodies = { a: randomBytes(300_000), b: randomBytes(200_000), c: randomBytes(100_000) };
    const blobs: Record<string, string> = {};
    const orphan = randomUUID();
    const young = randomUUID();
    const env = { ...Object.fromEntries(Object.entries(flags).map(([k, v]) => [envName(k), v])), ...options.fsckEnv };
    const fsck = (...args: string[]) => runLading(['fsck', ...args, '--data', s.dataDir], { env });
    const path = (file: string) => parsePath(`/${s.zone}/home/alice/${file}`);
    const get = (url: string, auth = alice) => fetch(url, { headers: { authorization: auth } });

    before(async () => {
      s = await startTestServer({ ...flags, 'metrics.listen': '127.0.0.1:0' });
      alice = await s.bearer('alice');
      for (const [file, body] of Object.entries(bodies)) {
        const res = await fetch(s.home('alice', `${file}.bin`), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
        assert.equal(res.status, 200, await res.text());
        blobs[file] = ((await s.deps.catalog.getEntity(path(`${file}.bin`))) as DataObject).blob;
      }
    });
    after(async () => {
      await s?.stop();
      await options.cleanup?.();
    });

    it('the background audit, once the interval has passed on its clock, marks a flipped byte and lost bytes; downloads of them fail on every front', async () => {
      await damage.flipByte(s, blobs.a!);
      await damage.remove(s, blobs.b!);
      let offset = 0;
      const clock: Clock = { now: () => new Date(Date.now() + offset) };
      const audit = new FixityAudit({
        catalog: s.deps.catalog, resource: s.deps.resource, clock, holder: 'test-auditor', bytesPerSecond: 0, intervalMs: 30 * DAY,
        ...(s.deps.observer ? { observer: s.deps.observer } : {}),
      });
      assert.deepEqual(await audit.pass(), { checked: 0, damaged: 0 }, 'nothing is due within the interval of its upload');
      offset = 31 * DAY;
      assert.deepEqual(await audit.pass(), { checked: 3, damaged: 2 });
      assert.deepEqual(await audit.pass(), { checked: 0, damaged: 0 }, 'each object once per interval');
      const a = (await s.deps.catalog.getEntity(path('a.bin'))) as DataObject;
      assert.match(a.damaged?.reason ?? '', /SHA-256/);
      const b = (await s.deps.catalog.getEntity(path('b.bin'))) as DataObject;
      assert.match(b.damaged?.reason ?? '', /missing/);
      assert.equal(((await s.deps.catalog.getEntity(path('c.bin'))) as DataObject).damaged, undefined);

      for (const file of ['a.bin', 'b.bin']) {
        const res = await get(`${s.home('alice', file)}?download=true`);
        assert.equal(res.status, 500, file);
        const body = await json(res);
        assert.match(JSON.stringify(body.Response.errors), /Object damaged/);
        const dav = await get(`${s.url}/dav/${s.zone}/home/alice/${file}`);
        assert.equal(dav.status, 500, `WebDAV GET of ${file}`);
        await dav.arrayBuffer();
      }
      const archive = await get(`${s.home('alice')}?download=zip`);
      await assert.rejects(archive.arrayBuffer(), 'an archive holding a damaged member is cut short, never completed');
      const whole = await get(`${s.home('alice', 'c.bin')}?download=true`);
      assert.equal(whole.status, 200);
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bodies.c);
      const listed = await json(await get(s.home('alice')));
      assert.equal(listed.Meta.status, 200, 'a damaged object stays listed');

      const scraped = await scrape(s.metricsUrl!);
      assert.equal(scraped.value('lading_fixity_damaged_objects'), 2);
      assert.equal(scraped.value('lading_fixity_objects_verified_total', { outcome: 'damaged' }), 1);
      assert.equal(scraped.value('lading_fixity_objects_verified_total', { outcome: 'missing' }), 1);
      assert.equal(scraped.value('lading_fixity_objects_verified_total', { outcome: 'ok' }), 1);
      assert.equal(scraped.value('lading_fixity_verified_bytes_total'), bodies.c.length);
    });

    it('lading fsck reports the damaged and missing objects and an old orphan in one table, and exits 1', async () => {
      await damage.addOrphan(s, orphan, Buffer.from('left behind'));
      await damage.addYoungKey?.(s, young, Buffer.from('being committed'));
      const res = await fsck();
      assert.equal(res.code, 1, res.stderr);
      const lines = res.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, /^PATH\s+PROBLEM\s+DETAIL$/);
      const row = (start: string) => lines.find((l) => l.startsWith(start));
      assert.match(row(`/${s.zone}/home/alice/a.bin `) ?? '', /\bdamaged\s+SHA-256 .* where sha2:.* was recorded \(key /);
      assert.match(row(`/${s.zone}/home/alice/b.bin `) ?? '', /\bmissing\s+bytes missing/);
      assert.match(row(`${orphan} `) ?? '', /\borphan\s+11 bytes no object refers to/);
      assert.equal(row(young), undefined, 'bytes younger than recovery.grace are no orphan yet');
      assert.equal(row(`/${s.zone}/home/alice/c.bin`), undefined);
      assert.match(lines.at(-1)!, /^checked 3 objects \(100000 bytes read whole\) and \d+ stored keys: 1 damaged, 1 missing, 1 orphan$/);
      assert.equal(lines.length, 5);
    });

    it('lading fsck --path checks only what lies there and looks for no orphans', async () => {
      const res = await fsck('--path', `/${s.zone}/home/alice/c.bin`);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout, 'checked 1 object (100000 bytes read whole): no problems\n');
      const bad = await fsck('--path', 'relative/path');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /^lading: .*path/);
      assert.doesNotMatch(bad.stderr, /\n\s+at /);
    });

    it('lading fsck --repair removes the orphan only; an upload clears a damaged object, and then fsck is clean', async () => {
      const repaired = await fsck('--repair');
      assert.equal(repaired.code, 1, 'the damaged objects remain');
      assert.match(repaired.stdout, new RegExp(`^${orphan}\\s+orphan \\(removed\\)`, 'm'));
      assert.match(repaired.stdout, /1 orphan \(1 removed\)\n$/);
      assert.equal(await damage.holds(s, orphan), false);
      if (damage.addYoungKey) assert.equal(await damage.holds(s, young), true, 'a young key is left alone');
      for (const file of ['a.bin', 'b.bin']) {
        const body = file === 'a.bin' ? bodies.a : bodies.b;
        const put = await fetch(`${s.home('alice', file)}?force=true`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
        assert.equal(put.status, 200, await put.text());
        const res = await get(`${s.home('alice', file)}?download=true`);
        assert.equal(res.status, 200);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), body);
      }
      assert.equal((await scrape(s.metricsUrl!)).value('lading_fixity_damaged_objects'), 0);
      if (damage.addYoungKey) await s.deps.resource.delete(young);
      const clean = await fsck();
      assert.equal(clean.code, 0, clean.stdout + clean.stderr);
      assert.match(clean.stdout, /^checked 3 objects \(600000 bytes read whole\) and \d+ stored keys: no problems\n$/);
    });
  });
}
