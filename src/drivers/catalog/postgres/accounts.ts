/**
 * The account role of the PostgreSQL catalog: users, admins and groups, memberships, and the
 * mapping of certificate subject DNs to users. Races between nodes are settled by unique
 * constraints and key-share locks on the users a change relies on.
 */
import { LadingError } from '../../../core/errors.ts';
import type { AccountStore } from '../../../core/ports.ts';
import { toUser } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

/** The account role over `db`; each check-then-write runs in one transaction. */
export function createPostgresAccounts(db: PostgresConnection): AccountStore {
  const { pool, S, tx } = db;
  return {
    async createUser(user) {
      await tx(async (c) => {
        const inserted = await count(c, `INSERT INTO ${S}users (name, kind, password_hash, created_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (name) DO NOTHING`, [user.name, user.kind, user.passwordHash, user.createdAt.getTime()]);
        if (inserted === 0) throw new LadingError('CONFLICT', `The name '${user.name}' is taken.`);
      });
    },

    async getUser(name) {
      const row = await one(pool, `SELECT * FROM ${S}users WHERE name = $1`, [name]);
      return row ? toUser(row) : null;
    },

    async listUsers() {
      return (await all(pool, `SELECT * FROM ${S}users ORDER BY name`)).map(toUser);
    },

    async setPasswordHash(name, hash) {
      if ((await count(pool, `UPDATE ${S}users SET password_hash = $1 WHERE name = $2`, [hash, name])) === 0) {
        throw new LadingError('NOT_FOUND', `No user '${name}'.`);
      }
    },

    async setDisabled(name, disabled) {
      if ((await count(pool, `UPDATE ${S}users SET disabled = $1 WHERE name = $2`, [disabled, name])) === 0) {
        throw new LadingError('NOT_FOUND', `No user '${name}'.`);
      }
    },

    async addToGroup(group, user) {
      await tx(async (c) => {
        const g = await one(c, `SELECT kind FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [group]);
        if (!g || g.kind !== 'group') throw new LadingError('NOT_FOUND', `No group '${group}'.`);
        if (!(await one(c, `SELECT 1 FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [user]))) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        await c.query(`INSERT INTO ${S}group_members (group_name, user_name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [group, user]);
      });
    },

    async groupsOf(user) {
      return (await all(pool, `SELECT group_name FROM ${S}group_members WHERE user_name = $1 ORDER BY group_name`, [user]))
        .map((r) => r.group_name as string);
    },

    async mapSubject(dn, user) {
      await tx(async (c) => {
        if (!(await one(c, `SELECT 1 FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [user]))) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        await c.query(`INSERT INTO ${S}subject_map (dn, user_name) VALUES ($1, $2) ON CONFLICT (dn) DO NOTHING`, [dn, user]);
        const row = await one(c, `SELECT user_name FROM ${S}subject_map WHERE dn = $1`, [dn]);
        if (row?.user_name !== user) throw new LadingError('CONFLICT', 'The subject is already mapped to another user.');
      });
    },

    async userForSubject(dn) {
      const row = await one(pool, `SELECT user_name FROM ${S}subject_map WHERE dn = $1`, [dn]);
      return row ? (row.user_name as string) : null;
    },

    async subjectsOf(user) {
      return (await all(pool, `SELECT dn FROM ${S}subject_map WHERE user_name = $1 ORDER BY dn`, [user])).map((r) => r.dn as string);
    },

    async unmapSubject(dn) {
      await pool.query(`DELETE FROM ${S}subject_map WHERE dn = $1`, [dn]);
    },
  };
}
