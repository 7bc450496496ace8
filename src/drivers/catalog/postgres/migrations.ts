/**
 * Schema migrations of the PostgreSQL catalog, applied in order at start under an advisory
 * lock (see `connection.ts`). Append only: a shipped migration is never edited. Version numbers
 * follow those of the SQLite catalog, so one number means the same feature in both.
 *
 * Every statement names its tables through `S`, the quoted schema followed by a dot; the
 * driver substitutes it, so one database can hold several catalogs in separate schemas.
 * Paths and names use the "C" collation: byte order, as in SQLite, which keeps listings in
 * the same order and makes a prefix range (`path >= 'x/' AND path < 'x0'`) exact and indexable.
 */
import { AUDIT_GENESIS } from '../../../core/audit.ts';

export const POSTGRES_MIGRATIONS: readonly { version: number; sql: (S: string) => string }[] = [
  {
    version: 1,
    sql: (S) => `
      CREATE TABLE ${S}entities (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        path TEXT COLLATE "C" NOT NULL UNIQUE,
        parent TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('collection', 'dataobject')),
        owner TEXT NOT NULL,
        size BIGINT,
        checksum TEXT,
        blob TEXT UNIQUE,
        created_at BIGINT NOT NULL,
        modified_at BIGINT NOT NULL
      );
      CREATE INDEX entities_by_parent ON ${S}entities (parent, name);
      INSERT INTO ${S}entities (path, parent, name, kind, owner, created_at, modified_at)
        VALUES ('/', '', '', 'collection', '_system', 0, 0);
      CREATE TABLE ${S}acls (
        entity_id BIGINT NOT NULL REFERENCES ${S}entities (id) ON DELETE CASCADE,
        principal TEXT NOT NULL,
        level SMALLINT NOT NULL CHECK (level BETWEEN 1 AND 3),
        PRIMARY KEY (entity_id, principal)
      );
      CREATE TABLE ${S}avus (
        entity_id BIGINT NOT NULL REFERENCES ${S}entities (id) ON DELETE CASCADE,
        attribute TEXT COLLATE "C" NOT NULL,
        value TEXT COLLATE "C" NOT NULL,
        unit TEXT COLLATE "C" NOT NULL DEFAULT '',
        PRIMARY KEY (entity_id, attribute, value, unit)
      );
      CREATE TABLE ${S}users (
        name TEXT COLLATE "C" PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('user', 'admin', 'group')),
        password_hash TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE ${S}group_members (
        group_name TEXT COLLATE "C" NOT NULL REFERENCES ${S}users (name) ON DELETE CASCADE,
        user_name TEXT COLLATE "C" NOT NULL REFERENCES ${S}users (name) ON DELETE CASCADE,
        PRIMARY KEY (group_name, user_name)
      );
      CREATE INDEX group_members_by_user ON ${S}group_members (user_name);
      CREATE TABLE ${S}sessions (
        token_hash TEXT PRIMARY KEY,
        user_name TEXT COLLATE "C" NOT NULL REFERENCES ${S}users (name) ON DELETE CASCADE,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        credential TEXT,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX sessions_by_user ON ${S}sessions (user_name, created_at);
      CREATE INDEX sessions_by_expiry ON ${S}sessions (expires_at);
      CREATE TABLE ${S}blobs (
        blob TEXT PRIMARY KEY,
        since BIGINT NOT NULL
      );
      CREATE INDEX blobs_by_since ON ${S}blobs (since);
    `,
  },
  {
    // Certificate subject DNs mapped to backend users (the grid-mapfile of the backend).
    version: 2,
    sql: (S) => `
      CREATE TABLE ${S}subject_map (
        dn TEXT COLLATE "C" PRIMARY KEY,
        user_name TEXT COLLATE "C" NOT NULL REFERENCES ${S}users (name) ON DELETE CASCADE
      );
      CREATE INDEX subject_map_by_user ON ${S}subject_map (user_name);
    `,
  },
  {
    version: 3,
    sql: (S) => `
      CREATE TABLE ${S}oidc_records (
        kind TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        payload TEXT NOT NULL,
        uid TEXT,
        user_code TEXT,
        grant_id TEXT,
        expires_at BIGINT,
        consumed_at BIGINT,
        PRIMARY KEY (kind, id)
      );
      CREATE INDEX oidc_records_by_uid ON ${S}oidc_records (kind, uid) WHERE uid IS NOT NULL;
      CREATE INDEX oidc_records_by_user_code ON ${S}oidc_records (kind, user_code) WHERE user_code IS NOT NULL;
      CREATE INDEX oidc_records_by_grant ON ${S}oidc_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oidc_records_by_expiry ON ${S}oidc_records (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE ${S}oidc_counters (
        key TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        window_ends BIGINT NOT NULL
      );
    `,
  },
  {
    // Stable entity ids (PIDs are made from them), the durable job queue and the embedded
    // handle service's records.
    version: 4,
    sql: (S) => `
      ALTER TABLE ${S}entities ADD COLUMN uid TEXT;
      UPDATE ${S}entities SET uid = gen_random_uuid()::text;
      ALTER TABLE ${S}entities ALTER COLUMN uid SET NOT NULL;
      CREATE UNIQUE INDEX entities_by_uid ON ${S}entities (uid);
      CREATE TABLE ${S}jobs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after BIGINT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT,
        last_error TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX jobs_due ON ${S}jobs (state, run_after);
      CREATE TABLE ${S}handles (
        handle TEXT PRIMARY KEY,
        record TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    // Accounts an operator has disabled.
    version: 5,
    sql: (S) => `ALTER TABLE ${S}users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT false;`,
  },
  {
    // Who writes a tracked blob, and when each node last beat, so recovery removes only what a
    // dead node left.
    version: 6,
    sql: (S) => `
      ALTER TABLE ${S}blobs ADD COLUMN owner TEXT;
      CREATE TABLE ${S}nodes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
    `,
  },
  {
    // Resumable uploads: the open ones (owning their staged blob) and the completed ones.
    version: 7,
    sql: (S) => `
      CREATE TABLE ${S}uploads (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        path TEXT NOT NULL,
        overwrite BOOLEAN NOT NULL,
        length BIGINT,
        received BIGINT NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL,
        blob TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'complete')),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        lease_holder TEXT,
        lease_until BIGINT,
        entity_id TEXT,
        job_ids TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX uploads_by_owner ON ${S}uploads (owner, status, created_at);
      CREATE INDEX uploads_by_expiry ON ${S}uploads (expires_at);
    `,
  },
  {
    // Share links: the hash of each token, the entity by its stable id (links follow renames)
    // and the uses taken so far.
    version: 8,
    sql: (S) => `
      CREATE TABLE ${S}shares (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        entity_uid TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('read', 'upload')),
        creator TEXT COLLATE "C" NOT NULL REFERENCES ${S}users (name) ON DELETE CASCADE,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        max_uses INTEGER CHECK (max_uses IS NULL OR max_uses > 0),
        uses INTEGER NOT NULL DEFAULT 0,
        password_hash TEXT,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX shares_by_entity ON ${S}shares (entity_uid, created_at);
      CREATE INDEX shares_by_creator ON ${S}shares (creator, created_at);
    `,
  },
  {
    // Who published or unpublished an entity, and when (the access itself is an ACL entry).
    version: 9,
    sql: (S) => `
      CREATE TABLE ${S}publication_events (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        entity_uid TEXT NOT NULL,
        path TEXT COLLATE "C" NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('published', 'unpublished')),
        actor TEXT NOT NULL,
        at BIGINT NOT NULL
      );
      CREATE INDEX publication_events_by_entity ON ${S}publication_events (entity_uid, id);
    `,
  },
  {
    // Browser sessions beside bearer tokens: a public id per session (lists and revocation
    // name it), its kind, the label of a token made on the "API access" page, the idle
    // deadline of a browser session and when a session was last used.
    version: 10,
    sql: (S) => `
      ALTER TABLE ${S}sessions
        ADD COLUMN id TEXT,
        ADD COLUMN kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'browser')),
        ADD COLUMN label TEXT,
        ADD COLUMN idle_expires_at BIGINT,
        ADD COLUMN last_used_at BIGINT;
      UPDATE ${S}sessions SET id = md5(token_hash || random()::text);
      ALTER TABLE ${S}sessions ALTER COLUMN id SET NOT NULL;
      CREATE UNIQUE INDEX sessions_by_id ON ${S}sessions (id);
      CREATE INDEX sessions_by_user_kind ON ${S}sessions (user_name, kind, created_at);
    `,
  },
  {
    // Access entries by principal: "shared with me" looks up what a user and their groups hold
    // entries on, which the primary key (entity first) cannot answer without reading every entry.
    version: 11,
    sql: (S) => `
      CREATE INDEX acls_by_principal ON ${S}acls (principal, entity_id);
    `,
  },
  {
    // The byte bound of a drop box and the bytes deposited (or reserved by deposits under
    // way); a link made before has no bound of its own and takes the configured default.
    version: 12,
    sql: (S) => `
      ALTER TABLE ${S}shares
        ADD COLUMN max_bytes BIGINT CHECK (max_bytes IS NULL OR max_bytes > 0),
        ADD COLUMN bytes_used BIGINT NOT NULL DEFAULT 0 CHECK (bytes_used >= 0);
    `,
  },
  {
    // Trash: the record of an entity taken out of the namespace (its rows move to the hidden
    // path `trash:<uid>`, keeping access lists, metadata and PIDs), and of the removal of its
    // bytes (purged after the retention, or taken down by an admin): a PID's tombstone shows it.
    version: 13,
    sql: (S) => `
      CREATE TABLE ${S}trash_entries (
        entity_uid TEXT PRIMARY KEY,
        path TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('trashed', 'purged', 'taken_down')),
        trashed_at BIGINT NOT NULL,
        trashed_by TEXT NOT NULL,
        reason TEXT,
        removed_at BIGINT,
        removed_by TEXT,
        removal_reason TEXT
      );
      CREATE INDEX trash_entries_by_state ON ${S}trash_entries (state, trashed_at);
      CREATE INDEX trash_entries_by_time ON ${S}trash_entries (trashed_at, entity_uid);
    `,
  },
  {
    // WebDAV locks, shared by every node (see `LockStore`).
    version: 14,
    sql: (S) => `
      CREATE TABLE ${S}dav_locks (
        token TEXT PRIMARY KEY,
        path TEXT COLLATE "C" NOT NULL,
        depth TEXT NOT NULL CHECK (depth IN ('zero', 'infinity')),
        scope TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
        owner TEXT NOT NULL,
        owner_xml TEXT NOT NULL,
        timeout_seconds BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX dav_locks_by_path ON ${S}dav_locks (path);
    `,
  },
  {
    // S3 access keys: a user's key pairs for the S3 front, the
    // secret sealed under the master key (SigV4 needs it back to verify a signature); and the
    // entity tag S3 clients check, kept with the object's bytes (the hex MD5 of a body stored
    // whole, '<hex>-<parts>' for a multipart upload), null for objects stored before.
    version: 15,
    sql: (S) => `
      CREATE TABLE ${S}s3_keys (
        id TEXT PRIMARY KEY,
        user_name TEXT NOT NULL,
        secret TEXT NOT NULL,
        label TEXT,
        created_at BIGINT NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
      );
      CREATE INDEX s3_keys_by_user ON ${S}s3_keys (user_name, created_at, seq);
      ALTER TABLE ${S}entities ADD COLUMN etag TEXT;
    `,
  },
  {
    // The audit trail (see `AuditStore`): one row per event, each chained to the one before
    // by its hash; `detail` is a small JSON object kept as text, hashed as it is stored.
    version: 16,
    sql: (S) => `
      CREATE TABLE ${S}audit_records (
        seq BIGINT PRIMARY KEY,
        at BIGINT NOT NULL,
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
      CREATE INDEX audit_records_by_at ON ${S}audit_records (at);
      CREATE INDEX audit_records_by_actor ON ${S}audit_records (actor, seq);
    `,
  },
  {
    // Quotas: the bounds of a collection's tree (a user's home, for a user's quota) and its
    // usage, counted only while a quota exists, in the transaction of each change (see
    // `QuotaStore`).
    version: 17,
    sql: (S) => `
      CREATE TABLE ${S}quotas (
        path TEXT COLLATE "C" PRIMARY KEY,
        user_name TEXT,
        max_bytes BIGINT CHECK (max_bytes IS NULL OR max_bytes >= 0),
        max_objects BIGINT CHECK (max_objects IS NULL OR max_objects >= 0),
        bytes_used BIGINT NOT NULL DEFAULT 0,
        objects_used BIGINT NOT NULL DEFAULT 0
      );
    `,
  },
  {
    // Fixity: when each data object's bytes were last read whole against their checksum (0:
    // never, so objects stored before are checked first), what a check found wrong, and which
    // checker holds the object now (see `FixityStore`).
    version: 18,
    sql: (S) => `
      ALTER TABLE ${S}entities
        ADD COLUMN verified_at BIGINT NOT NULL DEFAULT 0,
        ADD COLUMN damaged_at BIGINT,
        ADD COLUMN damage TEXT,
        ADD COLUMN fixity_holder TEXT,
        ADD COLUMN fixity_until BIGINT;
      CREATE INDEX entities_by_verification ON ${S}entities (verified_at, id) WHERE kind = 'dataobject' AND blob IS NOT NULL;
      CREATE INDEX entities_damaged ON ${S}entities (damaged_at) WHERE damaged_at IS NOT NULL;
    `,
  },
  {
    // The deployment's certificate authorities (the private key sealed under the master key),
    // kept in the catalog so that every node signs with the same CA and trusts the same ones;
    // the highest generation signs, older ones stay trust anchors after a rotation.
    version: 19,
    sql: (S) => `
      CREATE TABLE ${S}certificate_authorities (
        generation INTEGER PRIMARY KEY,
        cert_pem TEXT NOT NULL,
        sealed_key TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
    `,
  },
  {
    // What a node may remember of a request's reads (sessions, accounts and groups, subject
    // mappings, access entries, entities and their PID) is forgotten on every node when it
    // changes: each write to those tables, whoever makes it and however, notifies the schema's
    // cache channel when its transaction commits (see `postgres/memory.ts`). Statement-level,
    // so a write of many rows sends one notification; it names the session tokens or the
    // entities' paths it touched when they are few, or else only their kind (forget all of it).
    // No SQLite counterpart: one process holds that catalog, and it knows its own writes.
    version: 20,
    sql: (S) => `
      CREATE FUNCTION ${S}cache_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        channel text := left('lading_cache_' || lower(TG_TABLE_SCHEMA), 63);
        kind text := TG_ARGV[0];
        keys text[];
      BEGIN
        IF TG_OP = 'TRUNCATE' OR kind IN ('a', 'l') THEN
          PERFORM pg_notify(channel, json_build_object('k', CASE WHEN TG_OP = 'TRUNCATE' THEN '*' ELSE kind END)::text);
          RETURN NULL;
        END IF;
        IF kind = 's' THEN
          IF TG_OP = 'INSERT' THEN SELECT array_agg(k) INTO keys FROM (SELECT token_hash AS k FROM new_rows LIMIT 65) x;
          ELSIF TG_OP = 'DELETE' THEN SELECT array_agg(k) INTO keys FROM (SELECT token_hash AS k FROM old_rows LIMIT 65) x;
          ELSE SELECT array_agg(k) INTO keys FROM (SELECT token_hash AS k FROM old_rows UNION SELECT token_hash FROM new_rows LIMIT 65) x;
          END IF;
        ELSIF kind = 'v' THEN
          kind := 'e';
          IF TG_OP = 'INSERT' THEN
            SELECT array_agg(k) INTO keys FROM (SELECT DISTINCT e.path AS k FROM new_rows r JOIN ${S}entities e ON e.id = r.entity_id LIMIT 65) x;
          ELSIF TG_OP = 'DELETE' THEN
            SELECT array_agg(k) INTO keys FROM (SELECT DISTINCT e.path AS k FROM old_rows r JOIN ${S}entities e ON e.id = r.entity_id LIMIT 65) x;
          ELSE
            SELECT array_agg(k) INTO keys FROM (SELECT e.path AS k FROM ${S}entities e
              WHERE e.id IN (SELECT entity_id FROM old_rows UNION SELECT entity_id FROM new_rows) LIMIT 65) x;
          END IF;
          -- NOTE: the rows of a deleted entity go with it; its own deletion notifies.
          IF keys IS NULL THEN RETURN NULL; END IF;
        ELSE
          -- NOTE: an entity that moves or goes changes what the paths below it resolve to,
          -- and the levels read through them: all of both are forgotten.
          IF TG_OP = 'INSERT' THEN SELECT array_agg(k) INTO keys FROM (SELECT path AS k FROM new_rows LIMIT 65) x;
          ELSIF TG_OP = 'UPDATE' THEN
            IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.path <> o.path) THEN
              SELECT array_agg(k) INTO keys FROM (SELECT path AS k FROM new_rows LIMIT 65) x;
            END IF;
          END IF;
        END IF;
        IF keys IS NULL OR cardinality(keys) > 64 OR octet_length(array_to_string(keys, '')) > 7000 THEN
          PERFORM pg_notify(channel, json_build_object('k', kind)::text);
        ELSE
          PERFORM pg_notify(channel, json_build_object('k', kind, 'p', keys)::text);
        END IF;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER cache_ins AFTER INSERT ON ${S}sessions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('s');
      CREATE TRIGGER cache_upd AFTER UPDATE ON ${S}sessions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('s');
      CREATE TRIGGER cache_del AFTER DELETE ON ${S}sessions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('s');
      CREATE TRIGGER cache_ins AFTER INSERT ON ${S}entities REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('e');
      CREATE TRIGGER cache_upd AFTER UPDATE ON ${S}entities REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('e');
      CREATE TRIGGER cache_del AFTER DELETE ON ${S}entities FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('e');
      CREATE TRIGGER cache_ins AFTER INSERT ON ${S}avus REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('v');
      CREATE TRIGGER cache_upd AFTER UPDATE ON ${S}avus REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('v');
      CREATE TRIGGER cache_del AFTER DELETE ON ${S}avus REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('v');
      CREATE TRIGGER cache_any AFTER INSERT OR UPDATE OR DELETE ON ${S}acls FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('l');
      CREATE TRIGGER cache_any AFTER INSERT OR UPDATE OR DELETE ON ${S}users FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('a');
      CREATE TRIGGER cache_any AFTER INSERT OR UPDATE OR DELETE ON ${S}group_members FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('a');
      CREATE TRIGGER cache_any AFTER INSERT OR UPDATE OR DELETE ON ${S}subject_map FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('a');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}sessions FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}entities FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}avus FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}acls FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}users FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}group_members FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
      CREATE TRIGGER cache_truncate AFTER TRUNCATE ON ${S}subject_map FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_changed('*');
    `,
  },
  {
    // Search (see `SearchStore`): names through a GIN index of trigrams (pg_trgm, which
    // answers LIKE and ILIKE with any run of three characters; where the extension cannot be
    // created, name searches read the names without it); AVUs by attribute and value; an
    // owner's data objects by time (recent uploads).
    version: 21,
    sql: (S) => `
      DO $$
      DECLARE trgm TEXT;
      BEGIN
        BEGIN
          CREATE EXTENSION IF NOT EXISTS pg_trgm;
        EXCEPTION WHEN OTHERS THEN
          RAISE NOTICE 'pg_trgm cannot be created (%): name searches read every name below the collection searched', SQLERRM;
        END;
        SELECT n.nspname INTO trgm FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm';
        IF trgm IS NOT NULL THEN
          EXECUTE 'CREATE INDEX entities_by_name_trgm ON ${S}entities USING gin (name ' || quote_ident(trgm) || '.gin_trgm_ops)';
        END IF;
      END $$;
      CREATE INDEX avus_by_attribute ON ${S}avus (attribute, value, entity_id);
      CREATE INDEX entities_by_owner_time ON ${S}entities (owner, modified_at, uid) WHERE kind = 'dataobject';
    `,
  },
  {
    // The audit trail's head: the newest record's seq and hash in one row, so an append is one
    // statement (see `createPostgresAudit`): an UPDATE of that row, which waits for an append
    // in flight and then reads the row as it committed, where a read of the newest record in
    // the statement's snapshot could miss it. A trigger moves the head for a record inserted by
    // anything else (a node still running the previous append, hand-written SQL), so the head
    // never falls behind the trail.
    version: 22,
    sql: (S) => `
      CREATE TABLE ${S}audit_head (
        one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
        seq BIGINT NOT NULL,
        prev_hash TEXT,
        hash TEXT NOT NULL
      );
      INSERT INTO ${S}audit_head (seq, prev_hash, hash)
        SELECT COALESCE(r.seq, 0), r.prev_hash, COALESCE(r.hash, '${AUDIT_GENESIS}')
        FROM (SELECT 1) AS one LEFT JOIN (SELECT seq, prev_hash, hash FROM ${S}audit_records ORDER BY seq DESC LIMIT 1) AS r ON true;
      CREATE FUNCTION ${S}audit_head_follows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE ${S}audit_head SET seq = NEW.seq, prev_hash = NEW.prev_hash, hash = NEW.hash WHERE seq < NEW.seq;
        RETURN NULL;
      END $$;
      CREATE TRIGGER audit_head_follows AFTER INSERT ON ${S}audit_records FOR EACH ROW EXECUTE FUNCTION ${S}audit_head_follows();
    `,
  },
  {
    // A write to the access lists names the paths of the entities whose lists changed (as a
    // write to the AVUs does), so a node forgets the levels read at those paths and below them
    // and keeps every other: before, each upload's owner entry made every node forget every
    // level it had read. A list whose entity is gone, or too many paths for one notification,
    // still says only its kind (forget every level).
    version: 23,
    sql: (S) => `
      CREATE FUNCTION ${S}cache_levels_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        channel text := left('lading_cache_' || lower(TG_TABLE_SCHEMA), 63);
        keys text[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          SELECT array_agg(k) INTO keys FROM (SELECT DISTINCT e.path AS k FROM new_rows r JOIN ${S}entities e ON e.id = r.entity_id LIMIT 65) x;
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(k) INTO keys FROM (SELECT DISTINCT e.path AS k FROM old_rows r JOIN ${S}entities e ON e.id = r.entity_id LIMIT 65) x;
        ELSE
          SELECT array_agg(k) INTO keys FROM (SELECT e.path AS k FROM ${S}entities e
            WHERE e.id IN (SELECT entity_id FROM old_rows UNION SELECT entity_id FROM new_rows) LIMIT 65) x;
        END IF;
        -- NOTE: the rows of a deleted entity go with it (its own deletion notifies too); with
        -- no path to name, every level is forgotten.
        IF keys IS NULL OR cardinality(keys) > 64 OR octet_length(array_to_string(keys, '')) > 7000 THEN
          PERFORM pg_notify(channel, json_build_object('k', 'l')::text);
        ELSE
          PERFORM pg_notify(channel, json_build_object('k', 'l', 'p', keys)::text);
        END IF;
        RETURN NULL;
      END
      $fn$;
      DROP TRIGGER cache_any ON ${S}acls;
      CREATE TRIGGER cache_ins AFTER INSERT ON ${S}acls REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_levels_changed();
      CREATE TRIGGER cache_upd AFTER UPDATE ON ${S}acls REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_levels_changed();
      CREATE TRIGGER cache_del AFTER DELETE ON ${S}acls REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${S}cache_levels_changed();
    `,
  },
];
