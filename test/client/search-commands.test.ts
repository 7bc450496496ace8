/**
 * `lading search` and `lading recent` as a user runs them: the real CLI against a real `lading
 * serve`, finding by part of a name below a collection (a relative path starts at the home),
 * by a pattern, by metadata attribute and value, with `-l` and `--json`; refusing `--value`
 * without `--attr` as a usage error; listing the latest uploads first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, events, runCli, startNode } from './transfer-support.ts';

describe('lading search and lading recent', { timeout: 120_000 }, () => {
  let node: Node;

  before(async () => {
    node = await startNode();
    const put = async (local: string, remote: string) => {
      await writeFile(join(node.dir, local), `${remote}\n`);
      const ran = await runCli(['put', '-q', join(node.dir, local), remote], node.env);
      assert.equal(ran.code, 0, ran.stderr);
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    assert.equal((await runCli(['mkdir', '-p', 'cruise/ctd'], node.env)).code, 0);
    await put('a', 'cruise/ctd/Station-01.csv');
    await put('b', 'cruise/ctd/station-02.csv');
    await put('c', 'cruise/notes.txt');
    await put('d', 'elsewhere.csv');
    assert.equal((await runCli(['meta', 'add', 'cruise/ctd/station-02.csv', 'instrument', 'CTD'], node.env)).code, 0);
  });
  after(async () => {
    await node?.stop();
  });

  it('finds by part of a name below a collection, by pattern and by metadata', async () => {
    const byName = await runCli(['search', 'cruise', '--name', 'STATION'], node.env);
    assert.equal(byName.code, 0, byName.stderr);
    assert.equal(byName.stdout, `${node.home}/cruise/ctd/Station-01.csv\n${node.home}/cruise/ctd/station-02.csv\n`);
    const glob = await runCli(['search', '--name', '*.csv', '--type', 'dataobject', '--max', '3'], node.env);
    assert.equal(glob.stdout.split('\n').filter(Boolean).length, 3, 'everything readable, at most --max');
    const collections = await runCli(['search', '--type', 'collection', '-l'], node.env);
    assert.match(collections.stdout, new RegExp(`^d +- \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d ${node.home}/cruise/ctd/$`, 'm'));
    const meta = await runCli(['search', '--attr', 'instrument', '--value', 'CTD', '--json'], node.env);
    assert.equal(meta.code, 0, meta.stderr);
    const found = events(meta);
    assert.equal(found.length, 1);
    assert.equal(found[0]!.path, `${node.home}/cruise/ctd/station-02.csv`);
    assert.equal(found[0]!.type, 'dataobject');
    const bad = await runCli(['search', '--value', 'CTD'], node.env);
    assert.equal(bad.code, 2, 'a usage error');
    assert.match(bad.stderr, /--value needs --attr/);
  });

  it('lists the latest uploads first', async () => {
    const ran = await runCli(['recent', '--max', '2'], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, `${node.home}/elsewhere.csv\n${node.home}/cruise/notes.txt\n`);
  });
});
