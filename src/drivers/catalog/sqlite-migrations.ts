/**
 * Schema migrations of the SQLite catalog, applied in order at start. Append only: a shipped
 * migration is never edited.
 */
export const SQLITE_MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE entities (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        parent TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('collection', 'dataobject')),
        owner TEXT NOT NULL,
        size INTEGER,
        checksum TEXT,
        blob TEXT UNIQUE,
        created_at INTEGER NOT NULL,
        modified_at INTEGER NOT NULL
      );
      CREATE INDEX entities_by_parent ON entities (parent, name);
      INSERT INTO entities (path, parent, name, kind, owner, created_at, modified_at)
        VALUES ('/', '', '', 'collection', '_system', 0, 0);
      CREATE TABLE acls (
        entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
        principal TEXT NOT NULL,
        level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
        PRIMARY KEY (entity_id, principal)
      );
      CREATE TABLE avus (
        entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
        attribute TEXT NOT NULL,
        value TEXT NOT NULL,
        unit TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (entity_id, attribute, value, unit)
      );
      CREATE TABLE users (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('user', 'admin', 'group')),
        password_hash TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE group_members (
        group_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
        user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
        PRIMARY KEY (group_name, user_name)
      );
      CREATE INDEX group_members_by_user ON group_members (user_name);
      CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        credential TEXT
      );
      CREATE INDEX sessions_by_expiry ON sessions (expires_at);
      CREATE TABLE blobs (
        blob TEXT PRIMARY KEY,
        since INTEGER NOT NULL
      );
    `,
  },
];
