/**
 * The durable-job role of the PostgreSQL catalog: the `jobs` table shared by every node's
 * workers, the insert that namespace changes run inside their own transaction, and the
 * NOTIFY channel that wakes waiters and idle workers on every node.
 */
import type { JobStore } from '../../../core/ports.ts';
import type { JobInput } from '../../../core/types.ts';
import { queueFigures, toJob } from '../rows.ts';
import { type PgClientLike, type PostgresConnection, all, count, one } from './connection.ts';

/** A job id as this driver makes them (a bigint); anything else names no job. */
const JOB_ID = /^[1-9][0-9]{0,17}$/;

/** NOTIFY channel of job events, one per schema (so deployments sharing a database stay apart). */
function channelOf(db: PostgresConnection): string {
  return `lading_jobs_${db.schema.toLowerCase()}`.slice(0, 63);
}

/**
 * Inserts `jobs`, pending and due at `now`, in the transaction of `c`; returns their ids and
 * notifies the other nodes when that transaction commits.
 */
export async function insertJobs(db: PostgresConnection, c: PgClientLike, jobs: readonly JobInput[], now: Date): Promise<string[]> {
  if (jobs.length === 0) return [];
  // NOTE: one statement for every job and the notification, which is delivered when the
  // transaction commits, so other nodes' workers never wake for jobs that were rolled back.
  const row = (await one(c, `WITH ins AS (
      INSERT INTO ${db.S}jobs (kind, payload, state, run_after, created_at, updated_at)
      SELECT j.kind, j.payload, 'pending', $3, $3, $3 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS j(kind, payload, n) ORDER BY j.n
      RETURNING id
    )
    SELECT array_agg(id::text ORDER BY id) AS ids, pg_notify($4, 'enqueued') AS notified FROM ins`,
  [jobs.map((j) => j.kind), jobs.map((j) => j.payload), now.getTime(), channelOf(db)]))!;
  return row.ids as string[];
}

/** The job role over `db`, shared by every node's workers through row locks and NOTIFY. */
export function createPostgresJobs(db: PostgresConnection): JobStore {
  const { pool, S } = db;
  const channel = channelOf(db);
  return {
    async enqueueJobs(jobs, now) {
      return db.tx((c) => insertJobs(db, c, jobs, now));
    },

    async claimJobs(worker, now, leaseUntil, limit) {
      // NOTE: SKIP LOCKED lets workers on several nodes claim at once, each getting other jobs;
      // a row another worker claimed meanwhile no longer matches when re-checked under its lock.
      // The pick is a MATERIALIZED CTE, run exactly once: as `WHERE id IN (… LIMIT … SKIP
      // LOCKED)` the planner may run the subquery again per outer row and claim over the limit.
      const rows = await all(pool, `WITH picked AS MATERIALIZED (SELECT id FROM ${S}jobs
          WHERE (state = 'pending' AND run_after <= $3) OR (state = 'running' AND lease_until < $3)
          ORDER BY run_after, id LIMIT $4 FOR UPDATE SKIP LOCKED)
        UPDATE ${S}jobs AS j SET state = 'running', lease_owner = $1, lease_until = $2,
          attempts = j.attempts + 1, updated_at = $3
        FROM picked WHERE j.id = picked.id
        RETURNING j.*`, [worker, leaseUntil.getTime(), now.getTime(), limit]);
      return rows.map(toJob).sort((x, y) => x.runAfter.getTime() - y.runAfter.getTime() || Number(x.id) - Number(y.id));
    },

    async completeJob(id, worker, now) {
      if (!JOB_ID.test(id)) return false;
      const done = (await count(pool, `UPDATE ${S}jobs SET state = 'done', lease_owner = NULL, lease_until = NULL, last_error = NULL, updated_at = $1
        WHERE id = $2 AND state = 'running' AND lease_owner = $3`, [now.getTime(), id, worker])) > 0;
      if (done) await pool.query('SELECT pg_notify($1, $2)', [channel, `settled:${id}`]);
      return done;
    },

    async failJob(id, worker, error, now, retryAt) {
      if (!JOB_ID.test(id)) return false;
      const failed = (await count(pool, `UPDATE ${S}jobs SET state = $1, run_after = $2, lease_owner = NULL, lease_until = NULL, last_error = $3, updated_at = $4
        WHERE id = $5 AND state = 'running' AND lease_owner = $6`,
      [retryAt ? 'pending' : 'failed', (retryAt ?? now).getTime(), error, now.getTime(), id, worker])) > 0;
      if (failed && !retryAt) await pool.query('SELECT pg_notify($1, $2)', [channel, `settled:${id}`]);
      return failed;
    },

    async watchJobs(listener) {
      return db.listen(channel, (payload) => {
        if (payload === 'enqueued') listener({ enqueued: true });
        else if (payload.startsWith('settled:')) listener({ settled: payload.slice('settled:'.length) });
      }, {
        interrupted: (err) => listener({ interrupted: err }),
        resumed: () => listener({ resumed: true }),
      });
    },

    async pruneJobs(before, limit) {
      // NOTE: a done job's run_after is never after it settled, so jobs_due (state, run_after)
      // narrows the scan to the done jobs that may be old enough.
      return count(pool, `DELETE FROM ${S}jobs WHERE id IN (SELECT id FROM ${S}jobs WHERE state = 'done' AND run_after < $1 AND updated_at < $1
        ORDER BY updated_at, id LIMIT $2)`, [before.getTime(), limit]);
    },

    async releaseJobs(before) {
      return count(pool, `UPDATE ${S}jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL
        WHERE state = 'running' AND updated_at < $1`, [before.getTime()]);
    },

    async getJob(id) {
      if (!JOB_ID.test(id)) return null;
      const row = await one(pool, `SELECT * FROM ${S}jobs WHERE id = $1`, [id]);
      return row ? toJob(row) : null;
    },

    async listJobs(state, limit) {
      const rows = state
        ? await all(pool, `SELECT * FROM ${S}jobs WHERE state = $1 ORDER BY id DESC LIMIT $2`, [state, limit])
        : await all(pool, `SELECT * FROM ${S}jobs ORDER BY id DESC LIMIT $1`, [limit]);
      return rows.map(toJob);
    },

    async jobQueue() {
      return queueFigures(await all(pool, `SELECT state, count(*) AS n, min(created_at) AS oldest FROM ${S}jobs
        WHERE state IN ('pending', 'running', 'failed') GROUP BY state`));
    },
  };
}
