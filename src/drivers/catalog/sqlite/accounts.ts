/**
 * The account role of the SQLite catalog: users, admins and groups, memberships, and the
 * mapping of certificate subject DNs to users.
 */
import { LadingError } from '../../../core/errors.ts';
import type { AccountStore } from '../../../core/ports.ts';
import { toUser } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The account role over `db`; each check-then-write runs in one transaction. */
export function createSqliteAccounts(db: SqliteConnection): AccountStore {
  const { q, tx } = db;
  return {
    async createUser(user) {
      tx(() => {
        if (q('SELECT 1 FROM users WHERE name = ?').get(user.name)) throw new LadingError('CONFLICT', `The name '${user.name}' is taken.`);
        q('INSERT INTO users (name, kind, password_hash, created_at) VALUES (?, ?, ?, ?)')
          .run(user.name, user.kind, user.passwordHash, user.createdAt.getTime());
      });
    },

    async getUser(name) {
      return db.memo(`user\0${name}`, () => {
        const row = q('SELECT * FROM users WHERE name = ?').get(name) as Row | undefined;
        return row ? toUser(row) : null;
      });
    },

    async listUsers() {
      return (q('SELECT * FROM users ORDER BY name').all() as Row[]).map(toUser);
    },

    async setPasswordHash(name, hash) {
      const res = q('UPDATE users SET password_hash = ? WHERE name = ?').run(hash, name);
      if (res.changes === 0) throw new LadingError('NOT_FOUND', `No user '${name}'.`);
    },

    async setDisabled(name, disabled) {
      const res = q('UPDATE users SET disabled = ? WHERE name = ?').run(disabled ? 1 : 0, name);
      if (res.changes === 0) throw new LadingError('NOT_FOUND', `No user '${name}'.`);
    },

    async addToGroup(group, user) {
      tx(() => {
        const g = q('SELECT kind FROM users WHERE name = ?').get(group) as Row | undefined;
        if (!g || g.kind !== 'group') throw new LadingError('NOT_FOUND', `No group '${group}'.`);
        if (!q('SELECT 1 FROM users WHERE name = ?').get(user)) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        q('INSERT OR IGNORE INTO group_members (group_name, user_name) VALUES (?, ?)').run(group, user);
      });
    },

    async groupsOf(user) {
      return db.memo(`groups\0${user}`, () => (q('SELECT group_name FROM group_members WHERE user_name = ? ORDER BY group_name').all(user) as Row[])
        .map((r) => r.group_name as string));
    },

    async mapSubject(dn, user) {
      tx(() => {
        if (!q('SELECT 1 FROM users WHERE name = ?').get(user)) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        const row = q('SELECT user_name FROM subject_map WHERE dn = ?').get(dn) as Row | undefined;
        if (row && row.user_name !== user) throw new LadingError('CONFLICT', 'The subject is already mapped to another user.');
        if (!row) q('INSERT INTO subject_map (dn, user_name) VALUES (?, ?)').run(dn, user);
      });
    },

    async userForSubject(dn) {
      return db.memo(`subject\0${dn}`, () => {
        const row = q('SELECT user_name FROM subject_map WHERE dn = ?').get(dn) as Row | undefined;
        return row ? (row.user_name as string) : null;
      });
    },

    async subjectsOf(user) {
      return (q('SELECT dn FROM subject_map WHERE user_name = ? ORDER BY dn').all(user) as Row[]).map((r) => r.dn as string);
    },

    async unmapSubject(dn) {
      q('DELETE FROM subject_map WHERE dn = ?').run(dn);
    },
  };
}
