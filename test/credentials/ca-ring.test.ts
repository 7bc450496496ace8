/**
 * lading's CA kept in the catalog: nodes opening one catalog at once end up with one CA; the
 * CA of a data directory from before (`ca/ca.json`) is imported the first time, and said so;
 * a rotation makes the next generation sign, and the previous one stays a trust anchor until
 * the overlap has passed; a refusing key (another master key) is refused before it is shared.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createSealer } from '../../src/identity/secrets/sealing.ts';
import { loadOrCreateCa } from '../../src/identity/x509/ca.ts';
import { openCaRing, rotateCa } from '../../src/identity/x509/ca-ring.ts';
import type { Clock } from '../../src/core/ports.ts';

const sealer = createSealer(Buffer.alloc(32, 7));

describe('the CA in the catalog', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const catalog = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-ca-ring-'));
    dirs.push(dir);
    return { dir, catalog: createSqliteCatalog({ file: join(dir, 'catalog.sqlite') }) };
  };

  it('gives every node opening the catalog at once the same CA, created once', async () => {
    const { catalog: c } = await catalog();
    const said: string[] = [];
    const clock: Clock = { now: () => new Date() };
    const rings = await Promise.all([1, 2, 3].map(() => openCaRing({ catalog: c, sealer, zone: 'tz', clock, overlapSeconds: 60, log: (m) => said.push(m) })));
    assert.equal((await c.listCas()).length, 1);
    assert.equal(new Set(rings.map((r) => r.active().certPem)).size, 1);
    assert.deepEqual(rings.map((r) => r.generation()), [1, 1, 1]);
    assert.equal(said.length, 1, 'one node created it');
    assert.match(said[0]!, /created the CA and stored it in the catalog/);
    await c.close();
  });

  it('imports the CA of a data directory from before, once, and says so', async () => {
    const { dir, catalog: c } = await catalog();
    const legacy = await loadOrCreateCa({ dir: join(dir, 'ca'), zone: 'tz', sealer, now: new Date() });
    const said: string[] = [];
    const ring = await openCaRing({
      catalog: c, sealer, zone: 'tz', clock: { now: () => new Date() }, overlapSeconds: 60,
      legacyFile: join(dir, 'ca', 'ca.json'), log: (m) => said.push(m),
    });
    assert.equal(ring.active().certPem, legacy.certPem);
    assert.equal((await c.listCas())[0]!.sealedKey, JSON.parse(await readFile(join(dir, 'ca', 'ca.json'), 'utf8')).key);
    assert.deepEqual(said, [`imported the CA of ${join(dir, 'ca', 'ca.json')} into the catalog; the catalog holds it from now on, for every node`]);
    await openCaRing({ catalog: c, sealer, zone: 'tz', clock: { now: () => new Date() }, overlapSeconds: 60, legacyFile: join(dir, 'ca', 'ca.json'), log: (m) => said.push(m) });
    assert.equal(said.length, 1, 'imported once');
    await c.close();
  });

  it('refuses a CA whose key does not open under this node\'s master key, storing nothing', async () => {
    const { dir, catalog: c } = await catalog();
    await loadOrCreateCa({ dir: join(dir, 'ca'), zone: 'tz', sealer: createSealer(Buffer.alloc(32, 9)), now: new Date() });
    await assert.rejects(openCaRing({ catalog: c, sealer, zone: 'tz', clock: { now: () => new Date() }, overlapSeconds: 60, legacyFile: join(dir, 'ca', 'ca.json') }), { code: 'INTERNAL' });
    assert.deepEqual(await c.listCas(), []);
    await c.close();
  });

  it('rotates: the next generation signs, the previous one is trusted until the overlap has passed', async () => {
    const { catalog: c } = await catalog();
    let now = new Date('2026-11-27T12:00:00Z').getTime();
    const clock: Clock = { now: () => new Date(now) };
    const a = await openCaRing({ catalog: c, sealer, zone: 'tz', clock, overlapSeconds: 3600, minGapMs: 0 });
    const b = await openCaRing({ catalog: c, sealer, zone: 'tz', clock, overlapSeconds: 3600, minGapMs: 0 });
    const first = a.active().certPem;
    now += 1000;
    const rotated = await rotateCa({ catalog: c, sealer, zone: 'tz', clock });
    assert.equal(rotated.generation, 2);
    assert.equal(a.active().certPem, first, 'a node signs with what it read until it reads again');
    assert.equal(await a.refresh(), true);
    assert.equal(await b.refresh(), true);
    for (const r of [a, b]) {
      assert.equal(r.generation(), 2);
      assert.equal(r.active().certPem, rotated.certPem);
      assert.deepEqual(r.anchorPems(), [rotated.certPem, first]);
    }
    assert.equal(await a.refresh(), false, 'nothing changed since');
    now += 3600_000 - 1;
    assert.deepEqual(a.anchorPems(), [rotated.certPem, first]);
    now += 2;
    assert.deepEqual(a.anchorPems(), [rotated.certPem], 'the previous CA is no longer trusted once the overlap has passed');
    assert.equal(await a.refresh(), true, 'the anchors changed');
    await c.close();
  });
});
