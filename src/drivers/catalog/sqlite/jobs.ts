/**
 * The durable-job role of the SQLite catalog: the `jobs` table, and the insert that namespace
 * changes run inside their own transaction. A single-process catalog: it has no `watchJobs`.
 */
import type { JobStore } from '../../../core/ports.ts';
import type { JobInput } from '../../../core/types.ts';
import { queueFigures, toJob } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** Inserts `jobs`, pending and due at `now`, inside the caller's transaction; returns their ids. */
export function insertJobs(db: SqliteConnection, jobs: readonly JobInput[], now: Date): string[] {
  const insert = db.q(`INSERT INTO jobs (kind, payload, state, run_after, created_at, updated_at) VALUES (?, ?, 'pending', ?, ?, ?)`);
  return jobs.map((j) => String(insert.run(j.kind, j.payload, now.getTime(), now.getTime(), now.getTime()).lastInsertRowid));
}

/** The job role over `db`; a claim runs in one transaction, so each job goes to one worker. */
export function createSqliteJobs(db: SqliteConnection): JobStore {
  const { q, tx } = db;
  return {
    async enqueueJobs(jobs, now) {
      return tx(() => insertJobs(db, jobs, now));
    },

    async claimJobs(worker, now, leaseUntil, limit) {
      return tx(() => {
        const rows = q(`SELECT * FROM jobs WHERE (state = 'pending' AND run_after <= ?) OR (state = 'running' AND lease_until < ?)
          ORDER BY run_after, id LIMIT ?`).all(now.getTime(), now.getTime(), limit) as Row[];
        const claim = q(`UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?`);
        for (const row of rows) claim.run(worker, leaseUntil.getTime(), now.getTime(), row.id as number);
        return rows.map((row) => toJob({ ...row, state: 'running', lease_owner: worker, lease_until: leaseUntil.getTime(), attempts: Number(row.attempts) + 1, updated_at: now.getTime() }));
      });
    },

    async completeJob(id, worker, now) {
      return q(`UPDATE jobs SET state = 'done', lease_owner = NULL, lease_until = NULL, last_error = NULL, updated_at = ?
        WHERE id = ? AND state = 'running' AND lease_owner = ?`).run(now.getTime(), Number(id), worker).changes > 0;
    },

    async failJob(id, worker, error, now, retryAt) {
      return q(`UPDATE jobs SET state = ?, run_after = ?, lease_owner = NULL, lease_until = NULL, last_error = ?, updated_at = ?
        WHERE id = ? AND state = 'running' AND lease_owner = ?`)
        .run(retryAt ? 'pending' : 'failed', (retryAt ?? now).getTime(), error, now.getTime(), Number(id), worker).changes > 0;
    },

    async releaseJobs(before) {
      return Number(q(`UPDATE jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL WHERE state = 'running' AND updated_at < ?`)
        .run(before.getTime()).changes);
    },

    async getJob(id) {
      const row = q('SELECT * FROM jobs WHERE id = ?').get(Number(id)) as Row | undefined;
      return row ? toJob(row) : null;
    },

    async listJobs(state, limit) {
      const rows = (state
        ? q('SELECT * FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?').all(state, limit)
        : q('SELECT * FROM jobs ORDER BY id DESC LIMIT ?').all(limit)) as Row[];
      return rows.map(toJob);
    },

    async pruneJobs(before, limit) {
      // NOTE: a done job's run_after is never after it settled, so jobs_due (state, run_after)
      // narrows the scan to the done jobs that may be old enough.
      return Number(q(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'done' AND run_after < ? AND updated_at < ?
        ORDER BY updated_at, id LIMIT ?)`).run(before.getTime(), before.getTime(), limit).changes);
    },

    async jobQueue() {
      const rows = q(`SELECT state, count(*) AS n, min(created_at) AS oldest FROM jobs WHERE state IN ('pending', 'running', 'failed') GROUP BY state`).all() as Row[];
      return queueFigures(rows);
    },
  };
}
