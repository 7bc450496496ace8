/**
 * The job worker when the channel of job events from other nodes is lost and comes back: it
 * says so in the log, and once the channel is back it looks again at the jobs it waits for,
 * since a job that settled on another node meanwhile was never told.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JobWorker } from '../../src/core/jobs.ts';
import type { JobEvent, JobStore } from '../../src/core/catalog.ts';
import { systemClock } from '../../src/core/ports.ts';
import type { JobRecord, JobState } from '../../src/core/types.ts';

/** A job store of one job another node runs, whose state the test sets, with a channel the test drives. */
function storeOfOneJob() {
  let state: JobState = 'running';
  let listener: ((event: JobEvent) => void) | null = null;
  const job = (): JobRecord => ({
    id: '1', kind: 'pid', payload: '{}', state, attempts: 1, runAfter: new Date(0), leaseOwner: 'other-node', leaseUntil: null,
    lastError: null, createdAt: new Date(0), updatedAt: new Date(0),
  });
  const store: JobStore = {
    async enqueueJobs() { return []; },
    async claimJobs() { return []; },
    async completeJob() { return false; },
    async failJob() { return false; },
    async releaseJobs() { return 0; },
    async pruneJobs() { return 0; },
    async getJob(id) { return id === '1' ? job() : null; },
    async listJobs() { return [job()]; },
    async jobQueue() { return { pending: 0, running: 1, failed: 0, oldestPending: null }; },
    async watchJobs(l) {
      listener = l;
      return async () => { listener = null; };
    },
  };
  return {
    store,
    settle() { state = 'done'; },
    tell(event: JobEvent) { listener?.(event); },
    watching: () => listener !== null,
  };
}

describe('the job worker when job events are interrupted', () => {
  it('logs the loss and the return, and ends the waits of jobs that settled meanwhile once the channel is back', async () => {
    const { store, settle, tell, watching } = storeOfOneJob();
    const logged: string[] = [];
    const log = {
      info: (_: object, msg: string) => { logged.push(`info: ${msg}`); },
      warn: (_: object, msg: string) => { logged.push(`warn: ${msg}`); },
      error: (_: object, msg: string) => { logged.push(`error: ${msg}`); },
    };
    const worker = new JobWorker({ catalog: store, clock: systemClock, handlers: {}, workerId: 'this-node', pollMs: 60_000, log });
    worker.start();
    try {
      for (let i = 0; i < 100 && !watching(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(watching());
      const waited = worker.waitFor(['1'], 30_000);
      tell({ interrupted: new Error('Connection terminated unexpectedly') });
      // The job settles on the other node while the channel is down: no event arrives.
      settle();
      tell({ resumed: true });
      assert.equal(await waited, true, 'the wait ends when the channel is back, not at its deadline');
      assert.ok(logged.some((l) => l.startsWith('warn: job events from other nodes are interrupted')), logged.join('\n'));
      assert.ok(logged.some((l) => l.startsWith('info: job events from other nodes are back')), logged.join('\n'));
    } finally {
      await worker.stop();
    }
  });
});
