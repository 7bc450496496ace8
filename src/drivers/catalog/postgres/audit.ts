/**
 * The audit role of the PostgreSQL catalog: the hash-chained audit trail. An append takes a
 * transaction-scoped advisory lock of the schema's trail before it reads the newest record,
 * so appends from every node sharing the catalog form one line.
 */
import { type AuditQuery, type AuditRecord, type AuditStore, AUDIT_GENESIS, auditHash } from '../../../core/audit.ts';
import { toAuditRecord } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

/** The audit role over `db`; an append is one transaction: lock, read the head, insert. */
export function createPostgresAudit(db: PostgresConnection): AuditStore {
  const { pool, S, tx, schema } = db;
  const lockKey = `lading.audit.${schema}`;
  return {
    async appendAudit(input) {
      return tx(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
        const head = await one(c, `SELECT seq, hash FROM ${S}audit_records ORDER BY seq DESC LIMIT 1`);
        const unhashed: Omit<AuditRecord, 'hash'> = {
          ...input, detail: { ...input.detail }, seq: head ? Number(head.seq) + 1 : 1, prevHash: head ? head.hash as string : AUDIT_GENESIS,
        };
        const record: AuditRecord = { ...unhashed, hash: auditHash(unhashed) };
        await c.query(`INSERT INTO ${S}audit_records (seq, at, actor, address, door, action, path, detail, outcome, prev_hash, hash)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [record.seq, record.at.getTime(), record.actor, record.address, record.door,
          record.action, record.path, JSON.stringify(record.detail), record.outcome, record.prevHash, record.hash]);
        return record;
      });
    },

    async listAudit(query: AuditQuery) {
      const params: unknown[] = [query.after ?? 0];
      const where: string[] = ['seq > $1'];
      const add = (clause: (n: number) => string, value: unknown): void => {
        params.push(value);
        where.push(clause(params.length));
      };
      if (query.user) add((n) => `actor = $${n}`, query.user);
      if (query.action) add((n) => `action = $${n}`, query.action);
      if (query.path) {
        const prefix = query.path === '/' ? '/' : `${query.path}/`;
        params.push(query.path, prefix);
        where.push(`(path = $${params.length - 1} OR left(path, char_length($${params.length})) = $${params.length})`);
      }
      if (query.since) add((n) => `at >= $${n}`, query.since.getTime());
      if (query.until) add((n) => `at < $${n}`, query.until.getTime());
      params.push(query.limit);
      return (await all(pool, `SELECT * FROM ${S}audit_records WHERE ${where.join(' AND ')} ORDER BY seq LIMIT $${params.length}`, params)).map(toAuditRecord);
    },

    async pruneAudit(before, limit) {
      return count(pool, `DELETE FROM ${S}audit_records WHERE seq IN (SELECT seq FROM ${S}audit_records WHERE at < $1
        AND seq < (SELECT max(seq) FROM ${S}audit_records) ORDER BY seq LIMIT $2)`, [before.getTime(), limit]);
    },
  };
}
