/**
 * The audit contract: records appended in one chained line (seq, previous hash, own hash),
 * listed in order with filters and a cursor, appends racing on one catalog still forming one
 * chain, and pruning that keeps the newest record and a verifiable rest, as every catalog
 * driver must show them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { type AuditInput, AUDIT_GENESIS, auditHash, auditRecords, verifyAuditChain } from '../../src/core/audit.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const day = 86_400_000;

function event(over: Partial<AuditInput> = {}): AuditInput {
  return { at: t0, actor: 'alice', address: '192.0.2.1', door: 'api', action: 'upload', path: '/z/home/alice/f', detail: { size: 3 }, outcome: 'ok', ...over };
}

export const auditContract: ContractSuite = ({ name, create }) => {
  describe(`catalog audit contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('appends records in one chain, each hashing its content and its predecessor', async () => {
      const first = await c.appendAudit(event());
      assert.equal(first.seq, 1);
      assert.equal(first.prevHash, AUDIT_GENESIS);
      assert.equal(first.hash, auditHash(first));
      const second = await c.appendAudit(event({ action: 'login', path: null, detail: {}, actor: null, outcome: 'denied', at: new Date(t0.getTime() + 1) }));
      assert.equal(second.seq, 2);
      assert.equal(second.prevHash, first.hash);
      const listed = await c.listAudit({ limit: 10 });
      assert.deepEqual(listed, [first, second], 'stored as returned, detail and nulls included');
      assert.deepEqual(await verifyAuditChain(auditRecords(c)), { intact: true, count: 2 });
    });

    it('hashes every character of a record as auditHash does: quotes, escapes, non-ASCII names and detail keys in any order', async () => {
      const odd = await c.appendAudit(event({
        actor: 'zoë "z" \\ o', path: '/z/home/zoë/Ünïcødé ✓ 𝄞\u0001.txt', address: '2001:db8::1',
        detail: { zeta: 'a\nb', alpha: 1.5, mid: true, none: null, 'ключ': 'значение' },
      }));
      const next = await c.appendAudit(event());
      assert.equal(odd.hash, auditHash(odd));
      assert.equal(next.prevHash, odd.hash);
      assert.equal(next.hash, auditHash(next));
      assert.deepEqual(await verifyAuditChain(auditRecords(c)), { intact: true, count: 2 });
    });

    it('lists by user, action, path (and below), time, after a cursor and up to a limit', async () => {
      await c.appendAudit(event({ path: '/z/home/alice/a' }));
      await c.appendAudit(event({ actor: 'bob', path: '/z/home/bob/b', at: new Date(t0.getTime() + day) }));
      await c.appendAudit(event({ action: 'trash', path: '/z/home/alice', at: new Date(t0.getTime() + 2 * day) }));
      await c.appendAudit(event({ action: 'mkdir', path: '/z/home/alice2', at: new Date(t0.getTime() + 3 * day) }));
      const seqs = async (q: Parameters<Catalog['listAudit']>[0]) => (await c.listAudit(q)).map((r) => r.seq);
      assert.deepEqual(await seqs({ user: 'bob', limit: 10 }), [2]);
      assert.deepEqual(await seqs({ action: 'trash', limit: 10 }), [3]);
      assert.deepEqual(await seqs({ path: '/z/home/alice', limit: 10 }), [1, 3], 'the path and below it, not a sibling sharing its prefix');
      assert.deepEqual(await seqs({ since: new Date(t0.getTime() + day), until: new Date(t0.getTime() + 3 * day), limit: 10 }), [2, 3]);
      assert.deepEqual(await seqs({ after: 1, limit: 2 }), [2, 3]);
      assert.deepEqual(await seqs({ after: 4, limit: 2 }), []);
    });

    it('keeps one chain when appends race', async () => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => c.appendAudit(event({ detail: { i } }))));
      const all = await c.listAudit({ limit: 100 });
      assert.deepEqual(all.map((r) => r.seq), Array.from({ length: 20 }, (_, i) => i + 1));
      assert.deepEqual(await verifyAuditChain(auditRecords(c, {}, 7)), { intact: true, count: 20 });
    });

    it('prunes records older than a date, never the newest, and what is kept still verifies from its anchor', async () => {
      for (let i = 0; i < 5; i++) await c.appendAudit(event({ at: new Date(t0.getTime() + i * day) }));
      assert.equal(await c.pruneAudit(new Date(t0.getTime() + 2 * day), 100), 2);
      assert.deepEqual((await c.listAudit({ limit: 10 })).map((r) => r.seq), [3, 4, 5]);
      assert.deepEqual(await verifyAuditChain(auditRecords(c)), { intact: true, count: 3 });
      assert.equal(await c.pruneAudit(new Date(t0.getTime() + 100 * day), 100), 2, 'the newest stays');
      const next = await c.appendAudit(event());
      assert.equal(next.seq, 6, 'numbering goes on');
      assert.deepEqual(await verifyAuditChain(auditRecords(c)), { intact: true, count: 2 });
    });
  });
};
