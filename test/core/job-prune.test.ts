/**
 * Removing done jobs past `jobs.retention` (the periodic sweep's `pruneJobs`), on a real SQLite
 * catalog run by a real job worker: only jobs done longer ago than the retention go, all of
 * them however many, never a failed one; 0 keeps every job; and a wait for a job already
 * removed ends as settled instead of running into its deadline.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobWorker, pruneJobs } from '../../src/core/jobs.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-job-prune-'));
after(() => rm(dir, { recursive: true, force: true }));
const DAY = 86_400;

describe('pruning done jobs', () => {
  it('removes every job done longer ago than the retention, in batches, keeps failed and recent ones, and 0 keeps all', async () => {
    const catalog = createSqliteCatalog({ file: join(dir, 'batches.sqlite') });
    try {
      const t0 = new Date('2026-01-01T00:00:00Z');
      const old = await catalog.enqueueJobs(Array.from({ length: 2_345 }, (_, i) => ({ kind: 'pid', payload: String(i) })), t0);
      for (const job of await catalog.claimJobs('w', t0, new Date(t0.getTime() + 60_000), 3_000)) {
        if (job.id === old[0]) await catalog.failJob(job.id, 'w', 'handle service down', t0, null);
        else await catalog.completeJob(job.id, 'w', t0);
      }
      const t1 = new Date(t0.getTime() + 6 * DAY * 1000);
      const [recent] = await catalog.enqueueJobs([{ kind: 'pid', payload: 'recent' }], t1);
      await catalog.claimJobs('w', t1, new Date(t1.getTime() + 60_000), 1);
      await catalog.completeJob(recent!, 'w', t1);

      const now = new Date(t0.getTime() + 8 * DAY * 1000);
      assert.equal(await pruneJobs(catalog, now, 0), 0, '0 keeps every job');
      assert.equal(await pruneJobs(catalog, now, 7 * DAY), 2_344, 'every job done 8 days ago, over several batches');
      assert.deepEqual((await catalog.listJobs(null, 10)).map((j) => [j.id, j.state]), [[recent, 'done'], [old[0], 'failed']]);
      assert.equal(await pruneJobs(catalog, now, 7 * DAY), 0);
    } finally {
      await catalog.close();
    }
  });

  it('ends a wait for a job that was done and removed as settled', async () => {
    const catalog = createSqliteCatalog({ file: join(dir, 'wait.sqlite') });
    const worker = new JobWorker({
      catalog, clock: { now: () => new Date() }, workerId: 'w', pollMs: 20, handlers: { pid: async () => {} },
    });
    worker.start();
    try {
      const [id] = await catalog.enqueueJobs([{ kind: 'pid', payload: '{}' }], new Date());
      worker.wake();
      assert.equal(await worker.waitFor([id!], 10_000), true);
      assert.equal((await catalog.getJob(id!))?.state, 'done');
      assert.equal(await pruneJobs(catalog, new Date(Date.now() + 2_000), 1), 1);
      assert.equal(await catalog.getJob(id!), null);
      const started = Date.now();
      assert.equal(await worker.waitFor([id!], 10_000), true, 'a removed job counts as settled');
      assert.ok(Date.now() - started < 5_000, 'without waiting for the deadline');
    } finally {
      await worker.stop();
      await catalog.close();
    }
  });
});
