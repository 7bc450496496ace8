/** The audit role of the SQLite catalog: the hash-chained audit trail. SQLite's one writer keeps appends in one line. */
import { type AuditQuery, type AuditRecord, type AuditStore, AUDIT_GENESIS, auditHash } from '../../../core/audit.ts';
import { toAuditRecord } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The audit role over `db`; an append reads the newest record and inserts after it in one transaction. */
export function createSqliteAudit(db: SqliteConnection): AuditStore {
  const { q, tx } = db;
  return {
    async appendAudit(input) {
      return tx(() => {
        const head = q('SELECT seq, hash FROM audit_records ORDER BY seq DESC LIMIT 1').get() as Row | undefined;
        const unhashed: Omit<AuditRecord, 'hash'> = {
          ...input, detail: { ...input.detail }, seq: head ? Number(head.seq) + 1 : 1, prevHash: head ? head.hash as string : AUDIT_GENESIS,
        };
        const record: AuditRecord = { ...unhashed, hash: auditHash(unhashed) };
        q(`INSERT INTO audit_records (seq, at, actor, address, door, action, path, detail, outcome, prev_hash, hash)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(record.seq, record.at.getTime(), record.actor, record.address, record.door,
          record.action, record.path, JSON.stringify(record.detail), record.outcome, record.prevHash, record.hash);
        return record;
      });
    },

    async listAudit(query: AuditQuery) {
      const where: string[] = ['seq > ?'];
      const params: (string | number)[] = [query.after ?? 0];
      if (query.user) { where.push('actor = ?'); params.push(query.user); }
      if (query.action) { where.push('action = ?'); params.push(query.action); }
      if (query.path) {
        where.push("(path = ? OR substr(path, 1, ?) = ?)");
        const prefix = query.path === '/' ? '/' : `${query.path}/`;
        params.push(query.path, prefix.length, prefix);
      }
      if (query.since) { where.push('at >= ?'); params.push(query.since.getTime()); }
      if (query.until) { where.push('at < ?'); params.push(query.until.getTime()); }
      params.push(query.limit);
      // NOTE: the filters vary, so the statement is prepared per shape; `q` keeps each once.
      return (q(`SELECT * FROM audit_records WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`).all(...params) as Row[]).map(toAuditRecord);
    },

    async pruneAudit(before, limit) {
      return Number(q(`DELETE FROM audit_records WHERE seq IN (SELECT seq FROM audit_records WHERE at < ?
        AND seq < (SELECT max(seq) FROM audit_records) ORDER BY seq LIMIT ?)`).run(before.getTime(), limit).changes);
    },
  };
}
