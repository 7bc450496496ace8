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
  {
    // Certificate subject DNs mapped to backend users (the grid-mapfile of the backend).
    version: 2,
    sql: `
      CREATE TABLE subject_map (
        dn TEXT PRIMARY KEY,
        user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE
      );
      CREATE INDEX subject_map_by_user ON subject_map (user_name);
    `,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE oidc_records (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        payload TEXT NOT NULL,
        uid TEXT,
        user_code TEXT,
        grant_id TEXT,
        expires_at INTEGER,
        consumed_at INTEGER,
        PRIMARY KEY (kind, id)
      );
      CREATE INDEX oidc_records_by_uid ON oidc_records (kind, uid) WHERE uid IS NOT NULL;
      CREATE INDEX oidc_records_by_user_code ON oidc_records (kind, user_code) WHERE user_code IS NOT NULL;
      CREATE INDEX oidc_records_by_grant ON oidc_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oidc_records_by_expiry ON oidc_records (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE oidc_counters (
        key TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        window_ends INTEGER NOT NULL
      );
    `,
  },
  {
    // Stable entity ids (PID suffixes survive renames), durable jobs, embedded handle records.
    version: 4,
    sql: `
      ALTER TABLE entities ADD COLUMN uid TEXT;
      UPDATE entities SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)
        || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
      CREATE UNIQUE INDEX entities_by_uid ON entities (uid);
      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX jobs_due ON jobs (state, run_after);
      CREATE TABLE handles (
        handle TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Accounts an operator has disabled.
    version: 5,
    sql: 'ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;',
  },
  {
    // Who writes a tracked blob, and when each node last beat, so recovery on a shared
    // catalog removes only what a dead node left.
    version: 6,
    sql: `
      ALTER TABLE blobs ADD COLUMN owner TEXT;
      CREATE TABLE nodes (id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
    `,
  },
  {
    // Resumable uploads: the open ones (owning their staged blob) and the completed ones.
    version: 7,
    sql: `
      CREATE TABLE uploads (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        path TEXT NOT NULL,
        overwrite INTEGER NOT NULL,
        length INTEGER,
        received INTEGER NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL,
        blob TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'complete')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        lease_holder TEXT,
        lease_until INTEGER,
        entity_id TEXT,
        job_ids TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX uploads_by_owner ON uploads (owner, status, created_at);
      CREATE INDEX uploads_by_expiry ON uploads (expires_at);
    `,
  },
  {
    // Share links: the hash of each token, the entity by its stable id (links follow renames)
    // and the uses taken so far.
    version: 8,
    sql: `
      CREATE TABLE shares (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        entity_uid TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('read', 'upload')),
        creator TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        max_uses INTEGER CHECK (max_uses IS NULL OR max_uses > 0),
        uses INTEGER NOT NULL DEFAULT 0,
        password_hash TEXT
      );
      CREATE INDEX shares_by_entity ON shares (entity_uid, created_at);
      CREATE INDEX shares_by_creator ON shares (creator, created_at);
    `,
  },
  {
    // Who published or unpublished an entity, and when (the access itself is an ACL entry).
    version: 9,
    sql: `
      CREATE TABLE publication_events (
        id INTEGER PRIMARY KEY,
        entity_uid TEXT NOT NULL,
        path TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('published', 'unpublished')),
        actor TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE INDEX publication_events_by_entity ON publication_events (entity_uid, id);
    `,
  },
  {
    // Browser sessions beside bearer tokens: a public id per session (lists and revocation
    // name it), its kind, the label of a token made on the "API access" page, the idle
    // deadline of a browser session and when a session was last used.
    version: 10,
    sql: `
      ALTER TABLE sessions ADD COLUMN id TEXT;
      UPDATE sessions SET id = lower(hex(randomblob(12)));
      CREATE UNIQUE INDEX sessions_by_id ON sessions (id);
      ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'browser'));
      ALTER TABLE sessions ADD COLUMN label TEXT;
      ALTER TABLE sessions ADD COLUMN idle_expires_at INTEGER;
      ALTER TABLE sessions ADD COLUMN last_used_at INTEGER;
      CREATE INDEX sessions_by_user ON sessions (user_name, kind, created_at);
    `,
  },
  {
    // Access entries by principal: "shared with me" looks up what a user and their groups hold
    // entries on, which the primary key (entity first) cannot answer without reading every entry.
    version: 11,
    sql: `
      CREATE INDEX acls_by_principal ON acls (principal, entity_id);
    `,
  },
  {
    // The bytes of small objects, under their resource keys (drivers/resource/inline.ts).
    version: 12,
    sql: `
      CREATE TABLE inline_blobs (
        blob TEXT PRIMARY KEY,
        bytes BLOB NOT NULL
      );
    `,
  },
  {
    // The byte bound of a drop box and the bytes deposited (or reserved by deposits under
    // way); a link made before has no bound of its own and takes the configured default.
    version: 13,
    sql: `
      ALTER TABLE shares ADD COLUMN max_bytes INTEGER CHECK (max_bytes IS NULL OR max_bytes > 0);
      ALTER TABLE shares ADD COLUMN bytes_used INTEGER NOT NULL DEFAULT 0 CHECK (bytes_used >= 0);
    `,
  },
  {
    // Trash: the record of an entity taken out of the namespace (its rows move to the hidden
    // path `trash:<uid>`, keeping access lists, metadata and PIDs), and of the removal of its
    // bytes (purged after the retention, or taken down by an admin): a PID's tombstone shows it.
    version: 14,
    sql: `
      CREATE TABLE trash_entries (
        entity_uid TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('trashed', 'purged', 'taken_down')),
        trashed_at INTEGER NOT NULL,
        trashed_by TEXT NOT NULL,
        reason TEXT,
        removed_at INTEGER,
        removed_by TEXT,
        removal_reason TEXT
      );
      CREATE INDEX trash_entries_by_state ON trash_entries (state, trashed_at);
      CREATE INDEX trash_entries_by_time ON trash_entries (trashed_at, entity_uid);
    `,
  },
  {
    // WebDAV locks, shared by every process that opens this catalog (see `LockStore`).
    version: 15,
    sql: `
      CREATE TABLE dav_locks (
        token TEXT PRIMARY KEY,
        path TEXT NOT NULL,
        depth TEXT NOT NULL CHECK (depth IN ('zero', 'infinity')),
        scope TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
        owner TEXT NOT NULL,
        owner_xml TEXT NOT NULL,
        timeout_seconds INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX dav_locks_by_path ON dav_locks (path);
    `,
  },
  {
    // S3 access keys: a user's key pairs for the S3 front, the
    // secret sealed under the master key (SigV4 needs it back to verify a signature); and the
    // entity tag S3 clients check, kept with the object's bytes (the hex MD5 of a body stored
    // whole, '<hex>-<parts>' for a multipart upload), null for objects stored before.
    version: 16,
    sql: `
      CREATE TABLE s3_keys (
        id TEXT PRIMARY KEY,
        user_name TEXT NOT NULL,
        secret TEXT NOT NULL,
        label TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX s3_keys_by_user ON s3_keys (user_name, created_at);
      ALTER TABLE entities ADD COLUMN etag TEXT;
    `,
  },
  {
    // The audit trail (see `AuditStore`): one row per event, each chained to the one before
    // by its hash; `detail` is a small JSON object.
    version: 17,
    sql: `
      CREATE TABLE audit_records (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        actor TEXT,
        address TEXT,
        door TEXT NOT NULL,
        action TEXT NOT NULL,
        path TEXT,
        detail TEXT NOT NULL,
        outcome TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_records_by_at ON audit_records (at);
      CREATE INDEX audit_records_by_actor ON audit_records (actor, seq);
    `,
  },
  {
    // Quotas: the bounds of a collection's tree (a user's home, for a user's quota) and its
    // usage, counted only while a quota exists, in the transaction of each change (see
    // `QuotaStore`).
    version: 18,
    sql: `
      CREATE TABLE quotas (
        path TEXT PRIMARY KEY,
        user_name TEXT,
        max_bytes INTEGER CHECK (max_bytes IS NULL OR max_bytes >= 0),
        max_objects INTEGER CHECK (max_objects IS NULL OR max_objects >= 0),
        bytes_used INTEGER NOT NULL DEFAULT 0,
        objects_used INTEGER NOT NULL DEFAULT 0
      );
    `,
  },
  {
    // Fixity: when each data object's bytes were last read whole against their checksum (0:
    // never, so objects stored before are checked first), what a check found wrong, and which
    // checker holds the object now (see `FixityStore`).
    version: 19,
    sql: `
      ALTER TABLE entities ADD COLUMN verified_at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entities ADD COLUMN damaged_at INTEGER;
      ALTER TABLE entities ADD COLUMN damage TEXT;
      ALTER TABLE entities ADD COLUMN fixity_holder TEXT;
      ALTER TABLE entities ADD COLUMN fixity_until INTEGER;
      CREATE INDEX entities_by_verification ON entities (verified_at, id) WHERE kind = 'dataobject' AND blob IS NOT NULL;
      CREATE INDEX entities_damaged ON entities (damaged_at) WHERE damaged_at IS NOT NULL;
    `,
  },
  {
    // The deployment's certificate authorities (the private key sealed under the master key),
    // kept in the catalog so that every node signs with the same CA and trusts the same ones;
    // the highest generation signs, older ones stay trust anchors after a rotation.
    version: 20,
    sql: `
      CREATE TABLE certificate_authorities (
        generation INTEGER PRIMARY KEY,
        cert_pem TEXT NOT NULL,
        sealed_key TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Search (see `SearchStore`): an FTS5 index of trigrams over entity names, kept by
    // triggers (a name search reads it first, then matches the few names it gives exactly);
    // AVUs by attribute and value; an owner's data objects by time (recent uploads).
    version: 21,
    sql: `
      CREATE VIRTUAL TABLE entity_names USING fts5 (name, content = 'entities', content_rowid = 'id', tokenize = 'trigram');
      INSERT INTO entity_names (entity_names) VALUES ('rebuild');
      CREATE TRIGGER entity_names_insert AFTER INSERT ON entities BEGIN
        INSERT INTO entity_names (rowid, name) VALUES (new.id, new.name);
      END;
      CREATE TRIGGER entity_names_delete AFTER DELETE ON entities BEGIN
        INSERT INTO entity_names (entity_names, rowid, name) VALUES ('delete', old.id, old.name);
      END;
      CREATE TRIGGER entity_names_update AFTER UPDATE OF name ON entities WHEN old.name IS NOT new.name BEGIN
        INSERT INTO entity_names (entity_names, rowid, name) VALUES ('delete', old.id, old.name);
        INSERT INTO entity_names (rowid, name) VALUES (new.id, new.name);
      END;
      CREATE INDEX avus_by_attribute ON avus (attribute, value, entity_id);
      CREATE INDEX entities_by_owner_time ON entities (owner, modified_at, uid) WHERE kind = 'dataobject';
    `,
  },
];
