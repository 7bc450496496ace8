/**
 * The audit role of the PostgreSQL catalog: the hash-chained audit trail. An append is one
 * statement that moves the trail's head (`audit_head`, migration 22) and inserts the record
 * chained to it; the head's row lock, held until the statement commits, makes appends from
 * every node sharing the catalog one line.
 */
import { type AuditQuery, type AuditStore, auditHashedContent } from '../../../core/audit.ts';
import { toAuditRecord } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

/** The audit role over `db`; an append is one statement, its own transaction. */
export function createPostgresAudit(db: PostgresConnection): AuditStore {
  const { pool, S } = db;
  // NOTE: an UPDATE waits for an append in flight and then works on the head as that one
  // committed it; a read of the newest record would see only the statement's snapshot, taken
  // before the wait, and fork the chain. In SET every column names the head as it was, so the
  // record's hash is `auditHash` over the new seq, the content and the previous hash.
  const append = `WITH head AS (
      UPDATE ${S}audit_head SET seq = seq + 1, prev_hash = hash,
        hash = encode(sha256(convert_to('[' || (seq + 1)::text || ',', 'UTF8') || $1::bytea || convert_to(',"' || hash || '"]', 'UTF8')), 'hex')
      RETURNING seq, prev_hash, hash)
    INSERT INTO ${S}audit_records (seq, at, actor, address, door, action, path, detail, outcome, prev_hash, hash)
      SELECT seq, $2, $3, $4, $5, $6, $7, $8, $9, prev_hash, hash FROM head
    RETURNING *`;
  return {
    async appendAudit(input) {
      const row = await one(pool, append, [Buffer.from(auditHashedContent(input), 'utf8'), input.at.getTime(), input.actor, input.address,
        input.door, input.action, input.path, JSON.stringify(input.detail), input.outcome]);
      return toAuditRecord(row!);
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
