/**
 * The durable-jobs contract: enqueueing, claiming under a lease, completing, failing for a
 * retry or for good, and releasing, as every catalog driver must show them to one node's
 * workers. Races between nodes and `watchJobs` belong to the drivers that share a catalog.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:01:00Z');
const t2 = new Date('2026-01-01T00:02:00Z');

export const jobsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog jobs contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('enqueues pending jobs due now and lists them newest first, optionally of one state', async () => {
      const ids = await c.enqueueJobs([{ kind: 'pid', payload: '{"n":1}' }, { kind: 'pid', payload: '{"n":2}' }, { kind: 'rule', payload: '{}' }], t0);
      assert.equal(new Set(ids).size, 3);
      const first = await c.getJob(ids[0]!);
      assert.deepEqual(first, {
        id: ids[0], kind: 'pid', payload: '{"n":1}', state: 'pending', attempts: 0, runAfter: t0,
        leaseOwner: null, leaseUntil: null, lastError: null, createdAt: t0, updatedAt: t0,
      });
      assert.deepEqual((await c.listJobs(null, 10)).map((j) => j.id), [...ids].reverse());
      assert.deepEqual((await c.listJobs('pending', 2)).map((j) => j.id), [ids[2], ids[1]]);
      assert.deepEqual(await c.listJobs('done', 10), []);
      assert.deepEqual(await c.enqueueJobs([], t0), []);
    });

    it('never claims more than `limit` jobs, nor one job for two workers, when workers claim at once', async () => {
      const ids = await c.enqueueJobs(Array.from({ length: 60 }, (_, i) => ({ kind: 'pid', payload: `j${i}` })), t0);
      const claims = await Promise.all(Array.from({ length: 12 }, (_, w) => c.claimJobs(`w${w}`, t0, t1, 3)));
      for (const [w, claim] of claims.entries()) assert.ok(claim.length <= 3, `worker w${w} claimed ${claim.length} jobs with limit 3`);
      const claimed = claims.flat().map((j) => j.id);
      assert.equal(new Set(claimed).size, claimed.length, 'a job claimed by two workers');
      const left = await c.claimJobs('rest', t0, t1, 100);
      assert.deepEqual([...claimed, ...left.map((j) => j.id)].sort(), [...ids].sort(), 'every job claimed exactly once');
    });

    it('claims due jobs under a lease, gives each to one worker, and retakes them when the lease has expired', async () => {
      const ids = await c.enqueueJobs([{ kind: 'pid', payload: 'a' }, { kind: 'pid', payload: 'b' }], t0);
      await c.enqueueJobs([{ kind: 'pid', payload: 'later' }], t2);
      const claimed = await c.claimJobs('w1', t0, t1, 10);
      assert.deepEqual(claimed.map((j) => [j.id, j.state, j.leaseOwner, j.leaseUntil?.getTime(), j.attempts]),
        ids.map((id) => [id, 'running', 'w1', t1.getTime(), 1]), 'due jobs only, in order');
      assert.deepEqual(await c.claimJobs('w2', t0, t1, 10), [], 'leased');
      const retaken = await c.claimJobs('w2', new Date(t1.getTime() + 1), t2, 1);
      assert.deepEqual(retaken.map((j) => [j.id, j.leaseOwner, j.attempts]), [[ids[0], 'w2', 2]], 'at most `limit`');
      assert.equal(await c.completeJob(ids[0]!, 'w1', t1), false, 'w1 no longer holds it');
      assert.equal(await c.completeJob(ids[0]!, 'w2', t1), true);
      const done = await c.getJob(ids[0]!);
      assert.deepEqual([done?.state, done?.leaseOwner, done?.leaseUntil], ['done', null, null]);
      assert.equal(await c.completeJob(ids[0]!, 'w2', t1), false, 'a done job is not running');
    });

    it('fails a job for a retry at a later time, or for good', async () => {
      const [id] = await c.enqueueJobs([{ kind: 'pid', payload: '{}' }], t0);
      await c.claimJobs('w', t0, t2, 10);
      assert.equal(await c.failJob(id!, 'other', 'no', t0, t1), false, 'only the holder may fail it');
      assert.equal(await c.failJob(id!, 'w', 'handle service down', t0, t1), true);
      const retry = await c.getJob(id!);
      assert.deepEqual([retry?.state, retry?.runAfter, retry?.lastError, retry?.leaseOwner], ['pending', t1, 'handle service down', null]);
      assert.deepEqual(await c.claimJobs('w', t0, t2, 10), [], 'not due before retryAt');
      assert.equal((await c.claimJobs('w', t1, t2, 10))[0]?.attempts, 2);
      assert.equal(await c.failJob(id!, 'w', 'still down', t1, null), true);
      assert.equal((await c.getJob(id!))?.state, 'failed');
      assert.deepEqual(await c.claimJobs('w', t2, t2, 10), [], 'a failed job is never claimed again');
      assert.deepEqual((await c.listJobs('failed', 10)).map((j) => j.id), [id]);
    });

    it('releases running jobs claimed before a time, and no others', async () => {
      const [early, late] = await c.enqueueJobs([{ kind: 'pid', payload: '1' }, { kind: 'pid', payload: '2' }], t0);
      await c.claimJobs('w', t0, t2, 1);
      await c.claimJobs('w', t1, t2, 1);
      assert.equal(await c.releaseJobs(t1), 1);
      const released = await c.getJob(early!);
      assert.deepEqual([released?.state, released?.leaseOwner, released?.leaseUntil], ['pending', null, null]);
      assert.equal((await c.getJob(late!))?.state, 'running');
    });

    it('counts the queue by state, with when the oldest pending job was enqueued, and answers a ping', async () => {
      await c.ping();
      assert.deepEqual(await c.jobQueue(), { pending: 0, running: 0, failed: 0, oldestPending: null });
      const [a, b] = await c.enqueueJobs([{ kind: 'pid', payload: '1' }, { kind: 'pid', payload: '2' }], t0);
      await c.enqueueJobs([{ kind: 'pid', payload: '3' }, { kind: 'pid', payload: '4' }], t1);
      await c.claimJobs('w', t0, t2, 2);
      await c.failJob(a!, 'w', 'down', t1, null);
      assert.deepEqual(await c.jobQueue(), { pending: 2, running: 1, failed: 1, oldestPending: t1 });
      await c.completeJob(b!, 'w', t1);
      assert.deepEqual(await c.jobQueue(), { pending: 2, running: 0, failed: 1, oldestPending: t1 }, 'done jobs are not counted');
    });

    it('prunes done jobs that settled before a time, oldest first, in batches, and no job of another state', async () => {
      const [old1, old2, old3, recent, failed, pending, running] = await c.enqueueJobs(Array.from({ length: 7 }, (_, i) => ({ kind: 'pid', payload: String(i) })), t0);
      await c.claimJobs('w', t0, t2, 7);
      await c.enqueueJobs([{ kind: 'pid', payload: 'pending' }], t0);
      await c.completeJob(old2!, 'w', t0);
      await c.completeJob(old1!, 'w', t0);
      await c.completeJob(old3!, 'w', new Date(t0.getTime() + 1));
      await c.completeJob(recent!, 'w', t1);
      await c.failJob(failed!, 'w', 'down', t0, null);
      await c.failJob(pending!, 'w', 'down', t0, t0);
      assert.equal(await c.pruneJobs(t1, 2), 2, 'at most `limit`');
      assert.equal(await c.getJob(old3!) !== null, true, 'the oldest go first');
      assert.equal(await c.pruneJobs(t1, 10), 1);
      assert.equal(await c.pruneJobs(t1, 10), 0, 'nothing left to prune before t1');
      for (const id of [old1, old2, old3]) assert.equal(await c.getJob(id!), null, `job ${id} was done before t1`);
      assert.deepEqual(await Promise.all([recent, failed, pending, running].map(async (id) => (await c.getJob(id!))?.state)),
        ['done', 'failed', 'pending', 'running'], 'done at t1 is not before t1; other states stay however old');
      assert.equal(await c.pruneJobs(t2, 10), 1, 'the recent one, once older');
      assert.deepEqual((await c.listJobs(null, 10)).map((j) => j.state).sort(), ['failed', 'pending', 'pending', 'running']);
    });

    it('knows no job by an id it did not make', async () => {
      assert.equal(await c.getJob('not-a-job'), null);
      assert.equal(await c.getJob('999999'), null);
      assert.equal(await c.completeJob('not-a-job', 'w', t0), false);
      assert.equal(await c.failJob('not-a-job', 'w', 'x', t0, null), false);
    });
  });
};
