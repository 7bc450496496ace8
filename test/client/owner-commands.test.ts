/**
 * An owner's access, publishing and metadata over the API, as the logged-in user and without
 * the server's data directory: `lading acl set|ls`, `lading publish`/`unpublish` and `lading
 * meta ls|add|rm`, and `lading get` of a share link without an account, the real CLI against a real `lading serve`, checked through the API and as
 * the other user (and anonymous) would meet them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lading } from '../helpers/process.ts';
import { cleanEnv } from '../cli/run-lading.ts';
import { type Node, runCli, startNode } from './transfer-support.ts';

describe('lading acl, publish and meta as an owner', { timeout: 120_000 }, () => {
  let node: Node;
  let bob: string;
  let path: string;

  before(async () => {
    node = await startNode();
    lading(['user', 'add', 'bob', '--data', node.data], cleanEnv(), 'bob-pw\n');
    const res = await fetch(`${node.url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'bob', password: 'bob-pw' }) });
    bob = ((await res.json()) as { Response: { data: { token: string } } }).Response.data.token;
    const file = join(node.dir, 'shared.csv');
    await writeFile(file, 'a,b\n1,2\n');
    assert.equal((await runCli(['put', '-q', file, 'shared.csv'], node.env)).code, 0);
    path = `${node.home}/shared.csv`;
  });
  after(async () => {
    await node?.stop();
  });

  const read = async (token: string | null): Promise<number> => {
    const res = await fetch(`${node.url}/api/registered${path}?download=true`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    await res.body?.cancel();
    return res.status;
  };

  it('acl set gives bob read, acl ls shows it, level none takes it back', async () => {
    assert.equal(await read(bob), 403);
    const set = await runCli(['acl', 'set', 'shared.csv', 'bob', 'read'], { ...node.env, PWD: node.dir });
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `bob: read on ${path}\n`);
    assert.equal(await read(bob), 200);
    const ls = await runCli(['acl', 'ls', 'shared.csv'], node.env);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^bob\tread$/m);
    assert.match(ls.stdout, /\(owner alice\)/);
    assert.equal((await runCli(['acl', 'set', 'shared.csv', 'bob', 'none'], node.env)).code, 0);
    assert.equal(await read(bob), 403);
    const notMine = await runCli(['acl', 'set', path, 'bob', 'own'], { ...node.env, LADING_TOKEN: bob });
    assert.equal(notMine.code, 3, 'only an owner changes the list');
  });

  it('publish makes it readable without a token at the URL printed; unpublish stops that', async () => {
    const pub = await runCli(['publish', 'shared.csv'], node.env);
    assert.equal(pub.code, 0, pub.stderr);
    const url = /is published: (\S+)$/m.exec(pub.stdout)?.[1];
    assert.ok(url, pub.stdout);
    const res = await fetch(`${url}?download=true`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'a,b\n1,2\n');
    assert.match((await runCli(['publish', '--status', 'shared.csv'], node.env)).stdout, /is published/);
    const un = await runCli(['unpublish', 'shared.csv'], node.env);
    assert.equal(un.code, 0, un.stderr);
    assert.equal(un.stdout, `${path} is not published any more\n`);
    const gone = await fetch(`${url}?download=true`);
    await gone.body?.cancel();
    assert.notEqual(gone.status, 200);
  });

  it('get <share link> downloads without an account, to a file or standard output', async () => {
    const created = await runCli(['share', 'create', 'shared.csv'], node.env);
    assert.equal(created.code, 0, created.stderr);
    const link = created.stdout.split('\n')[0]!;
    assert.match(link, /\/api\/shared\//);
    const nobody = { HOME: node.dir, XDG_CONFIG_HOME: join(node.dir, 'nobody') };
    const local = join(node.dir, 'from-link.csv');
    const got = await runCli(['get', link, local], nobody);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(await readFile(local, 'utf8'), 'a,b\n1,2\n');
    assert.match(got.stderr, /^lading: received .*from-link\.csv from the link \(sha256 [0-9a-f]{64}, verified\)$/m);
    const out = await runCli(['get', link, '-'], nobody);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'a,b\n1,2\n');
    const again = await runCli(['get', link, local], nobody);
    assert.equal(again.code, 5, 'an existing file is a conflict without --force');
  });

  it('meta add, ls and rm', async () => {
    assert.equal((await runCli(['meta', 'add', 'shared.csv', 'depth', '1200', 'm'], node.env)).code, 0);
    assert.equal((await runCli(['meta', 'add', 'shared.csv', 'instrument', 'CTD'], node.env)).code, 0);
    const ls = await runCli(['meta', 'ls', 'shared.csv'], node.env);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^depth\t1200\tm$/m);
    assert.match(ls.stdout, /^instrument\tCTD$/m);
    assert.equal((await runCli(['meta', 'rm', 'shared.csv', 'depth'], node.env)).code, 0);
    const json = await runCli(['meta', 'ls', '--json', 'shared.csv'], node.env);
    const avus = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { attribute: string });
    assert.deepEqual(avus.map((a) => a.attribute).filter((a) => a !== 'PID'), ['instrument']);
  });
});
