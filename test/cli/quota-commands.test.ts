/**
 * `lading quota` (the operator's, on the data directory of a running server) and `lading df`
 * (the user's, over the API), run as people run them: a quota set by user name or path is
 * shown, counts what is there, refuses a `lading put` past it with one line naming the limit
 * and the usage, and goes when cleared; a mistake is one line and a non-zero exit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, runCli, startNode } from '../client/transfer-support.ts';
import { runLading } from './run-lading.ts';

describe('lading quota and lading df', { timeout: 120_000 }, () => {
  let node: Node;
  const admin = (args: string[]) => runLading([...args, '--data', node.data], { env: { LADING_ZONE: 'tz' } });

  before(async () => {
    node = await startNode();
  });
  after(async () => {
    await node?.stop();
  });

  it('sets, shows and clears quotas, which df shows and put meets', async () => {
    const file = join(node.dir, 'six.bin');
    await writeFile(file, 'x'.repeat(600));
    assert.equal((await runCli(['put', file, `${node.home}/six.bin`], node.env)).code, 0);

    const set = await admin(['quota', 'set', 'alice', '--bytes', '1KiB', '--objects', '5']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `quota of ${node.home} (alice): 600 B of 1.00 KiB, 1 of 5 data objects\n`);
    assert.equal((await admin(['quota', 'set', `${node.home}`, '--objects', 'none'])).stdout, `quota of ${node.home} (alice): 600 B of 1.00 KiB, 1 of unlimited data objects\n`, 'a bound not given is kept');
    assert.equal((await admin(['quota', 'show'])).stdout, `${node.home} (alice): 600 B of 1.00 KiB, 1 of unlimited data objects\n`);

    const df = await runCli(['df'], node.env);
    assert.equal(df.code, 0, df.stderr);
    assert.equal(df.stdout, `quota\tused\tallowed\tavailable\tobjects\tobjects allowed\n${node.home} (alice)\t600 B\t1.00 KiB\t424 B\t1\tunlimited\n`);
    const json = JSON.parse((await runCli(['df', '--json'], node.env)).stdout) as Record<string, unknown>;
    assert.deepEqual(json, { path: node.home, user: 'alice', max_bytes: 1024, max_objects: null, used_bytes: 600, used_objects: 1, available_bytes: 424 });

    const over = await runCli(['put', file, `${node.home}/again.bin`], node.env);
    assert.notEqual(over.code, 0);
    assert.match(over.stderr, /Over the quota of alice \(\/tz\/home\/alice\): 1\.00 KiB allowed, 600 B used, this write needs 600 B/);
    assert.equal(over.stderr.split('Over the quota').length - 1, 1, `said once, not retried: ${over.stderr}`);

    assert.equal((await admin(['quota', 'clear', 'alice'])).stdout, 'quota of alice removed\n');
    assert.equal((await admin(['quota', 'show', 'alice'])).stdout, 'alice has no quota\n');
    assert.equal((await runCli(['df'], node.env)).stdout, `no quota bounds ${node.home}\n`);
    assert.equal((await runCli(['put', file, `${node.home}/again.bin`], node.env)).code, 0);
  });

  it('refuses a mistake with one line', async () => {
    for (const [args, message] of [
      [['quota', 'set', 'nobody', '--bytes', '1GiB'], /no user 'nobody'/],
      [['quota', 'set', 'alice', '--bytes', 'lots'], /'lots' is not a size/],
      [['quota', 'set', 'alice'], /Give --bytes, --objects or both/],
      [['quota', 'set', '/tz/home/none', '--bytes', '1'], /'\/tz\/home\/none' does not exist/],
    ] as const) {
      const res = await admin([...args]);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, /^lading: [^\n]+\n$/, JSON.stringify(res.stderr));
      assert.match(res.stderr, message);
    }
  });
});
