/**
 * The SQLite catalog: every catalog contract suite on a fresh file each, what the file keeps
 * across a restart, the options the factory refuses, and that a write is answered only once
 * its transaction is on disk, concurrent writes sharing the flushes of the write-ahead log; and
 * that the reads on every request's path are remembered only until the database changes, by
 * this connection, a rollback or another process; and that checkpoints keep the log from
 * growing without ever letting it be restarted over pages the database file may not hold on disk.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LadingError } from '../../src/core/errors.ts';
import type { Path } from '../../src/core/path.ts';
import { createSqliteCatalog, type SqliteCatalogOptions } from '../../src/drivers/catalog/sqlite.ts';
import { type CheckpointStep, catalogError, openSqlite, tableWritten, tablesChangedWith, tablesRead } from '../../src/drivers/catalog/sqlite/connection.ts';
import { DatabaseSync } from 'node:sqlite';
import { runCatalogContracts } from '../contracts/catalog-contract.ts';
import { onDatasync } from '../helpers/datasync.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-sqlite-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
runCatalogContracts({ name: 'sqlite', create: async () => createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) }) });

describe('sqlite catalog', () => {
  it('sqlite: OIDC records survive a restart', async () => {
    const file = join(dir, `c${n++}.sqlite`);
    const first = createSqliteCatalog({ file });
    await first.oidcPut('Grant', 'g', { payload: 'kept', expiresAt: null });
    await first.close();
    const second = createSqliteCatalog({ file });
    assert.equal((await second.oidcGet('Grant', 'g', new Date()))?.payload, 'kept');
    await second.close();
  });

  it('answers a write only after a flush of the log that began after it; concurrent writes share flushes', async (t) => {
    const file = join(dir, `c${n++}.sqlite`);
    const catalog = createSqliteCatalog({ file });
    t.after(() => catalog.close());
    // Every flush of any file by this process, with when it began and ended.
    const probe = await open(file, 'r');
    const proto = Object.getPrototypeOf(probe) as { datasync(this: { fd: number }): Promise<void> };
    await probe.close();
    const original = proto.datasync;
    const flushes: { began: number; ended: number }[] = [];
    let clock = 0;
    proto.datasync = async function (this: { fd: number }) {
      const began = ++clock;
      await original.call(this);
      flushes.push({ began, ended: ++clock });
    };
    t.after(() => {
      proto.datasync = original;
    });
    const writes = 24;
    const results = await Promise.all(Array.from({ length: writes }, async (_, i) => {
      const called = ++clock;
      await catalog.createUser({ name: `u${i}`, kind: 'user', passwordHash: null, createdAt: new Date() });
      return { called, answered: ++clock };
    }));
    for (const { called, answered } of results) {
      assert.ok(flushes.some((f) => f.began > called && f.ended < answered), `write called at ${called}, answered at ${answered}: no flush in between (${JSON.stringify(flushes)})`);
    }
    assert.ok(flushes.length >= 1 && flushes.length <= writes / 4, `${flushes.length} flushes for ${writes} concurrent writes`);
    // A read does not flush.
    const before = flushes.length;
    assert.equal((await catalog.getUser('u3'))?.name, 'u3');
    assert.equal(flushes.length, before);
  });

  it('remembers a read on the request path until this connection changes the database', async (t) => {
    const catalog = createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) });
    t.after(() => catalog.close());
    await catalog.createUser({ name: 'ada', kind: 'user', passwordHash: null, createdAt: new Date() });
    const first = await catalog.getUser('ada');
    // The same record, not read again (and frozen, since every caller shares it).
    assert.equal(await catalog.getUser('ada'), first);
    assert.ok(Object.isFrozen(first));
    await catalog.setDisabled('ada', true);
    const after = await catalog.getUser('ada');
    assert.notEqual(after, first);
    assert.equal(after?.disabled, true);
    // A write that changes another row also ends what was remembered.
    await catalog.createUser({ name: 'bob', kind: 'user', passwordHash: null, createdAt: new Date() });
    assert.notEqual(await catalog.getUser('ada'), after);
  });

  it('keeps what it remembers across writes to tables the read did not look at, not across others', async (t) => {
    const catalog = createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) });
    t.after(() => catalog.close());
    await catalog.createUser({ name: 'ada', kind: 'user', passwordHash: null, createdAt: new Date() });
    await catalog.createCollection({ path: '/z' as never, owner: 'ada', now: new Date() });
    await catalog.createCollection({ path: '/z/data' as never, owner: 'ada', now: new Date() });
    const first = await catalog.getUser('ada');
    const groups = await catalog.groupsOf('ada');
    assert.equal(await catalog.accessLevel('/z/data' as never, ['bob']), null);
    await catalog.trackBlob('0123456789abcdef', new Date());
    await catalog.heartbeat('node-1', new Date());
    // An upload's commit: entities, access lists, blob tracking.
    await catalog.commitObject({ path: '/z/data/x' as never, owner: 'ada', size: 1, checksum: 'sha2:x', blob: '0123456789abcdef', now: new Date(), overwrite: false, fenced: true });
    assert.equal(await catalog.getUser('ada'), first, 'a blob, node or entity write left the user remembered');
    assert.equal(await catalog.groupsOf('ada'), groups, 'and the groups');
    await catalog.setAccess('/z/data' as never, 'bob', 'read');
    assert.equal(await catalog.accessLevel('/z/data' as never, ['bob']), 'read', 'a write to the access lists is seen');
    await catalog.setDisabled('ada', true);
    assert.equal((await catalog.getUser('ada'))?.disabled, true);
  });

  it('keeps a read remembered with a path across changes at paths off its lineage, and drops it at a change on it or anywhere', (t) => {
    const db = openSqlite(join(dir, `c${n++}.sqlite`));
    t.after(() => db.close());
    const insert = (path: string): void => {
      db.q("INSERT INTO entities (uid, path, parent, name, kind, owner, created_at, modified_at) VALUES (?, ?, '', '', 'collection', 'ada', 0, 0)").run(path, path);
    };
    db.tx(() => insert('/z'));
    let reads = 0;
    const read = (path: string) => () => {
      reads++;
      return (db.q('SELECT count(*) AS n FROM entities WHERE path = ?').get(path) as { n: number }).n;
    };
    const remembered = (path: string): number => db.memo(`n\0${path}`, read(path), path as Path);
    const at = (path: string) => ({ path: path as Path, tables: new Set(['entities']) });
    assert.equal(remembered('/z/data'), 0);
    assert.equal(reads, 1);
    db.tx(() => insert('/z/other'), at('/z/other'));
    db.tx(() => insert('/z/data2'), at('/z/data2'));
    assert.equal(remembered('/z/data'), 0);
    assert.equal(reads, 1, 'changes at a sibling and at a path that only starts alike left it remembered');
    db.tx(() => insert('/z/data'), at('/z/data'));
    assert.equal(remembered('/z/data'), 1, 'a change at its own path is seen');
    assert.equal(reads, 2);
    assert.equal(remembered('/z/data/x'), 0);
    db.tx(() => db.q("UPDATE entities SET modified_at = 1 WHERE path = '/z'").run(), at('/z'));
    assert.equal(remembered('/z/data/x'), 0);
    assert.equal(reads, 4, 'a change at an ancestor is on its lineage');
    db.tx(() => insert('/y'));
    assert.equal(remembered('/z/data/x'), 0);
    assert.equal(reads, 5, 'a change whose place is not told is anywhere');
    db.tx(() => db.q("INSERT INTO users (name, kind, created_at) VALUES ('ada', 'user', 0)").run(), at('/y'));
    assert.equal(remembered('/z/data/x'), 0);
    assert.equal(reads, 5, 'a write to a table the read did not look at');
    // Without a path, a change anywhere in a table it read drops it, as before.
    const plain = (): number => db.memo('plain', read('/z/data'));
    assert.equal(plain(), 1);
    db.tx(() => insert('/z/elsewhere'), at('/z/elsewhere'));
    const before = reads;
    assert.equal(plain(), 1);
    assert.equal(reads, before + 1);
  });

  it('sees a new or replaced data object and its access at its own path, and keeps its collection remembered', async (t) => {
    const catalog = createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) });
    t.after(() => catalog.close());
    const now = new Date();
    await catalog.createCollection({ path: '/z' as never, owner: 'ada', now });
    await catalog.createCollection({ path: '/z/data' as never, owner: 'ada', now });
    const collection = await catalog.getEntity('/z/data' as never);
    assert.equal(await catalog.getEntity('/z/data/x' as never), null);
    assert.equal(await catalog.accessLevel('/z/data/x' as never, ['ada']), 'own');
    assert.equal(await catalog.accessLevel('/z/data/x/y' as never, ['ada']), 'own');
    const sizeAt = async (path: string): Promise<number | null> => {
      const entity = await catalog.getEntity(path as never);
      return entity?.kind === 'dataobject' ? entity.size : null;
    };
    const commit = (size: number, overwrite: boolean) => catalog.commitObject({ path: '/z/data/x' as never, owner: 'ada', size, checksum: 'sha2:x', blob: `blob${size}`.padEnd(16, '0'), now, overwrite });
    await commit(1, false);
    assert.equal(await catalog.getEntity('/z/data' as never), collection, 'the collection is not read again');
    assert.equal(await sizeAt('/z/data/x'), 1, 'the new object is seen');
    await commit(2, true);
    assert.equal(await sizeAt('/z/data/x'), 2, 'and its new content');
    await catalog.setAccess('/z/data' as never, 'bob', 'read');
    assert.equal(await catalog.accessLevel('/z/data/x' as never, ['bob']), 'read', 'a grant on the collection reaches the object');
    assert.equal(await catalog.getEntity('/z/data' as never), collection, 'a grant changes no entity');
    await catalog.rename('/z/data/x' as never, '/z/data/w' as never, now);
    assert.notEqual(await catalog.getEntity('/z/data' as never), collection, 'a rename, whose place is not told, is taken to change any entity');
    assert.equal(await catalog.getEntity('/z/data/x' as never), null);
  });

  it('drops what it remembers when a foreign key action changes a table it read', (t) => {
    const db = openSqlite(join(dir, `c${n++}.sqlite`));
    t.after(() => db.close());
    db.tx(() => {
      for (const name of ['ada', 'lab']) db.q("INSERT INTO users (name, kind, created_at) VALUES (?, 'user', 0)").run(name);
      db.q('INSERT INTO group_members (group_name, user_name) VALUES (?, ?)').run('lab', 'ada');
    });
    const read = () => (db.q('SELECT group_name FROM group_members WHERE user_name = ?').all('ada')).map((r) => r.group_name);
    assert.deepEqual(db.memo('groups', read), ['lab']);
    // Deleting the group deletes its memberships (ON DELETE CASCADE): no statement names group_members.
    db.tx(() => db.q('DELETE FROM users WHERE name = ?').run('lab'));
    assert.deepEqual(db.memo('groups', read), []);
  });

  it('drops everything it remembers at a change by a statement whose table it cannot tell', (t) => {
    const db = openSqlite(join(dir, `c${n++}.sqlite`));
    t.after(() => db.close());
    db.tx(() => db.q("INSERT INTO users (name, kind, created_at) VALUES ('ada', 'user', 0)").run());
    const read = () => db.q("SELECT name FROM users WHERE name = 'ada'").get()?.name ?? null;
    assert.equal(db.memo('ada', read), 'ada');
    db.tx(() => db.q("WITH gone AS (SELECT 'ada' AS name) DELETE FROM users WHERE name IN (SELECT name FROM gone)").run());
    assert.equal(db.memo('ada', read), null);
  });

  it('tells which tables a statement reads and writes, and which a write may change through foreign keys', () => {
    assert.deepEqual([...tablesRead('SELECT e.id, (SELECT value FROM avus v WHERE v.entity_id = e.id) FROM entities e')!].sort(), ['avus', 'entities']);
    assert.deepEqual([...tablesRead('SELECT MAX(a.level) FROM acls a JOIN entities e ON e.id = a.entity_id')!].sort(), ['acls', 'entities']);
    assert.equal(tablesRead('PRAGMA data_version'), null);
    assert.equal(tableWritten('INSERT OR IGNORE INTO blobs (blob) VALUES (?)'), 'blobs');
    assert.equal(tableWritten('\n  UPDATE uploads SET x = 1'), 'uploads');
    assert.equal(tableWritten('delete from Jobs where id = ?'), 'jobs');
    for (const sql of ['WITH x AS (SELECT 1) DELETE FROM jobs', 'SELECT 1', 'VACUUM', 'CREATE TABLE t (x)']) assert.equal(tableWritten(sql), null, sql);
    const db = new DatabaseSync(':memory:');
    db.exec(`PRAGMA foreign_keys = ON;
      CREATE TABLE a (id INTEGER PRIMARY KEY);
      CREATE TABLE b (id INTEGER PRIMARY KEY, a INTEGER REFERENCES a (id) ON DELETE CASCADE);
      CREATE TABLE c (id INTEGER PRIMARY KEY, b INTEGER REFERENCES b (id) ON UPDATE SET NULL);
      CREATE TABLE d (id INTEGER PRIMARY KEY, a INTEGER REFERENCES a (id));`);
    const closure = tablesChangedWith(db)!;
    assert.deepEqual([...closure.get('a')!].sort(), ['a', 'b', 'c']);
    assert.deepEqual([...closure.get('d')!], ['d']);
    db.exec(`CREATE TABLE e (id INTEGER PRIMARY KEY);
      CREATE TRIGGER t AFTER INSERT ON d BEGIN DELETE FROM a; INSERT INTO e (id) VALUES ('1'); END;`);
    const withTrigger = tablesChangedWith(db)!;
    assert.deepEqual([...withTrigger.get('d')!].sort(), ['a', 'b', 'c', 'd', 'e'], 'what a trigger writes, and what that changes through foreign keys');
    assert.deepEqual([...withTrigger.get('a')!].sort(), ['a', 'b', 'c']);
    db.exec("CREATE TRIGGER u AFTER INSERT ON e BEGIN SELECT 1; END;");
    assert.equal(tablesChangedWith(db), null, 'with a trigger whose writes cannot be told nothing is known');
    db.close();
  });

  it('sees a change another process made to the file from the next turn of the event loop on', async (t) => {
    const file = join(dir, `c${n++}.sqlite`);
    const server = createSqliteCatalog({ file });
    const admin = createSqliteCatalog({ file });
    t.after(async () => {
      await server.close();
      await admin.close();
    });
    await server.createUser({ name: 'ada', kind: 'user', passwordHash: null, createdAt: new Date() });
    assert.equal((await server.getUser('ada'))?.disabled, false);
    assert.deepEqual(await server.groupsOf('ada'), []);
    await admin.setDisabled('ada', true);
    await admin.createUser({ name: 'lab', kind: 'group', passwordHash: null, createdAt: new Date() });
    await admin.addToGroup('lab', 'ada');
    await nextTurn();
    assert.equal((await server.getUser('ada'))?.disabled, true);
    assert.deepEqual(await server.groupsOf('ada'), ['lab']);
  });

  it('does not remember what a rolled-back transaction read', async (t) => {
    const db = openSqlite(join(dir, `c${n++}.sqlite`));
    t.after(() => db.close());
    const read = () => (db.q("SELECT name FROM users WHERE name = 'ghost'").get()?.name as string | undefined) ?? null;
    assert.equal(db.memo('ghost', read), null);
    assert.throws(() => db.tx(() => {
      db.q("INSERT INTO users (name, kind, created_at) VALUES ('ghost', 'user', 0)").run();
      assert.equal(db.memo('ghost', read), 'ghost');
      throw new Error('abort');
    }), /abort/);
    assert.equal(db.memo('ghost', read), null);
  });

  it('when SQLite rolled the transaction back itself (as after SQLITE_FULL), rejects with the error that ended it and forgets what it read', (t) => {
    const db = openSqlite(join(dir, `c${n++}.sqlite`));
    t.after(() => db.close());
    const read = () => (db.q("SELECT name FROM users WHERE name = 'ghost'").get()?.name as string | undefined) ?? null;
    assert.equal(db.memo('ghost', read), null);
    assert.throws(() => db.tx(() => {
      db.q("INSERT INTO users (name, kind, created_at) VALUES ('ghost', 'user', 0)").run();
      assert.equal(db.memo('ghost', read), 'ghost');
      // What SQLite does by itself when a write finds the disk full: the transaction is gone.
      db.q('ROLLBACK').run();
      throw new Error('the disk is full');
    }), /the disk is full/);
    assert.equal(db.memo('ghost', read), null);
    db.tx(() => db.q("INSERT INTO users (name, kind, created_at) VALUES ('ada', 'user', 0)").run());
    assert.equal(db.q("SELECT count(*) AS n FROM users WHERE name = 'ada'").get()?.n, 1, 'the connection writes again');
  });

  it('turns a full disk into STORAGE_FULL', async () => {
    const full = Object.assign(new Error('database or disk is full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 });
    for (const err of [full, Object.assign(new Error('shm'), { errcode: 4874 }), Object.assign(new Error('flush'), { code: 'ENOSPC' })]) {
      const mapped = catalogError(err) as LadingError;
      assert.equal(mapped.code, 'STORAGE_FULL', err.message);
      assert.equal(mapped.cause, err);
    }
    const other = Object.assign(new Error('constraint'), { errcode: 2067 });
    assert.equal(catalogError(other), other);
  });

  /** The salts in the log's header: SQLite draws new ones whenever it restarts the log from its beginning. */
  const salts = async (file: string): Promise<string> => (await readFile(`${file}-wal`)).subarray(16, 24).toString('hex');
  const addUser = (db: ReturnType<typeof openSqlite>, name: string) =>
    db.tx(() => db.q("INSERT INTO users (name, kind, created_at) VALUES (?, 'user', 0)").run(name));
  it('checkpoints the log as it goes, in order, so that it stops growing, and keeps every row', async () => {
    const file = join(dir, `c${n++}.sqlite`);
    const steps: CheckpointStep[] = [];
    const db = openSqlite(file, { checkpointAfter: 20, logPages: 100, onCheckpoint: (s) => steps.push(s) });
    for (let i = 0; i < 400; i++) {
      addUser(db, `u${i}`);
      await db.durable();
    }
    const cycles = steps.join(',').split('snapshot,log flushed,copied,database flushed,released').length - 1;
    assert.ok(cycles >= 5, `${cycles} checkpoints: ${steps.slice(0, 12).join(', ')}`);
    assert.equal(steps.join(',').replaceAll('snapshot,log flushed,copied,database flushed,released', '').replace(/^,+|,+$/g, '').replace(/^snapshot(,log flushed(,copied(,database flushed)?)?)?$/, ''), '', 'every checkpoint took its steps in order');
    // Without checkpoints 400 commits fill the log with over 800 pages (3 MiB).
    assert.ok((await stat(`${file}-wal`)).size < 1024 * 1024, `the log holds ${(await stat(`${file}-wal`)).size} bytes`);
    await db.close();
    const again = new DatabaseSync(file);
    assert.equal(again.prepare('PRAGMA integrity_check').get()?.integrity_check, 'ok');
    assert.equal(again.prepare("SELECT count(*) AS n FROM users WHERE name LIKE 'u%'").get()?.n, 400);
    again.close();
  });

  it('never lets the log restart over pages before the database file holding them is flushed', async (t) => {
    const file = join(dir, `c${n++}.sqlite`);
    let open_gate!: () => void;
    const gate = new Promise<void>((resolve) => { open_gate = resolve; });
    let reached!: () => void;
    const atDatabaseFlush = new Promise<void>((resolve) => { reached = resolve; });
    await onDatasync(t, async (path, original) => {
      if (path === file) {
        reached();
        await gate;
      }
      return original();
    });
    const steps: CheckpointStep[] = [];
    const db = openSqlite(file, { checkpointAfter: 10, onCheckpoint: (s) => steps.push(s) });
    t.after(() => {
      open_gate();
      return db.close();
    });
    for (let i = 0; i < 10; i++) addUser(db, `a${i}`);
    await atDatabaseFlush;
    assert.deepEqual(steps, ['snapshot', 'log flushed', 'copied']);
    const before = await salts(file);
    // The log is wholly copied into the database file, which is not yet on disk: these commits
    // must go on at its end, not overwrite its beginning.
    for (let i = 0; i < 5; i++) addUser(db, `b${i}`);
    await db.durable();
    assert.equal(await salts(file), before, 'the log was restarted before the database file was flushed');
    open_gate();
    while (!steps.includes('released')) await nextTurn();
    assert.deepEqual(steps, ['snapshot', 'log flushed', 'copied', 'database flushed', 'released']);
  });

  it('keeps the log whole, and refuses to confirm writes, when a flush of the database file fails', async (t) => {
    const file = join(dir, `c${n++}.sqlite`);
    let failed!: () => void;
    const flushFailed = new Promise<void>((resolve) => { failed = resolve; });
    await onDatasync(t, async (path, original) => {
      if (path === file) {
        failed();
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      }
      return original();
    });
    const steps: CheckpointStep[] = [];
    const db = openSqlite(file, { checkpointAfter: 10, onCheckpoint: (s) => steps.push(s) });
    t.after(() => db.close());
    for (let i = 0; i < 10; i++) addUser(db, `c${i}`);
    await flushFailed;
    // The rejection reaches the checkpoint in the same turn.
    await nextTurn();
    const before = await salts(file);
    addUser(db, 'late');
    await assert.rejects(db.durable(), /EIO/);
    assert.equal(await salts(file), before, 'the log was restarted over pages the database file may not hold');
    assert.deepEqual(steps, ['snapshot', 'log flushed', 'copied']);
  });

  it('refuses a missing file with a TypeError naming the option', () => {
    for (const options of [{ file: '' }, {} as SqliteCatalogOptions]) {
      assert.throws(() => createSqliteCatalog(options), (err: Error & { option?: string }) =>
        err instanceof TypeError && err.option === 'file' && /`file`/.test(err.message));
    }
  });
});
