/**
 * A resumable upload that another request still holds (a node that died holding its lease,
 * with a shared catalog) is answered 409 with Retry-After, the seconds left on the lease: the
 * real CLI waits that long before it sends the bytes again, rather than retrying every second
 * and giving up before the lease ends, and for as long as the server keeps saying so (a server
 * that restarted holds its leases a while), without using up its retries. A proxy in front of a real `lading serve` answers the
 * first PATCH so, as such a node would.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Node, events, runCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;
/** What the proxy's 409 says is left of the lease, in seconds. */
const LEASE_LEFT_S = 4;

describe('lading put of an upload another request holds', { timeout: 120_000 }, () => {
  let node: Node;
  let proxy: http.Server;
  let proxyUrl: string;
  /** When each PATCH reached the proxy (ms since the epoch). */
  const patchTimes: number[] = [];
  /** How many PATCH requests in a row the proxy answers busy. */
  let busyFor = 1;
  let retryAfter = LEASE_LEFT_S;

  before(async () => {
    node = await startNode();
    const target = new URL(node.env.LADING_URL!);
    // Forwards everything but the first PATCH, which it answers as a node whose upload another
    // request holds: 409 in the envelope with the lease's remaining seconds.
    proxy = http.createServer((req, res) => {
      if (req.method === 'PATCH' && patchTimes.push(Date.now()) <= busyFor) {
        req.resume();
        req.on('end', () => {
          const body = JSON.stringify({ Meta: { data_type: "<class 'NoneType'>", elements: 0, errors: 1, status: 409 }, Response: { data: null, errors: [{ Conflict: 'Another request is appending to this upload; retry later.' }] } });
          res.writeHead(409, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(retryAfter), 'tus-resumable': '1.0.0' });
          res.end(body);
        });
        return;
      }
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await node?.stop();
  });

  it('waits for the Retry-After of a busy upload, then stores the file whole', async () => {
    const file = join(node.dir, 'busy.bin');
    const bytes = randomBytes(2 * MIB);
    await writeFile(file, bytes);
    const ran = await runCli(['put', '--json', '--resumable-above', '1', file, `${node.home}/busy.bin`], { ...node.env, LADING_URL: proxyUrl });
    assert.equal(ran.code, 0, ran.stderr);
    assert.ok(patchTimes.length >= 2, `the proxy saw ${patchTimes.length} PATCH requests`);
    // NOTE: a lower bound only: the client may wait longer on a slow machine, never less.
    const waited = patchTimes[1]! - patchTimes[0]!;
    assert.ok(waited >= LEASE_LEFT_S * 1000 - 200, `the client sent the bytes again after ${waited} ms, before the ${LEASE_LEFT_S} s the server asked for`);
    const done = events(ran).find((e) => e.event === 'done')!;
    assert.equal(done.sha256, createHash('sha256').update(bytes).digest('hex'));
    const res = await fetch(`${node.url}/api/registered${node.home}/busy.bin?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), 'the stored bytes are the file\'s');
  });

  it('keeps waiting for as long as the server says the lease is held, without using up its retries', async () => {
    patchTimes.length = 0;
    busyFor = 8;
    retryAfter = 1;
    const file = join(node.dir, 'held.bin');
    const bytes = randomBytes(2 * MIB);
    await writeFile(file, bytes);
    const ran = await runCli(['put', '--retries', '1', '--resumable-above', '1', file, `${node.home}/held.bin`], { ...node.env, LADING_URL: proxyUrl });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(patchTimes.length, busyFor + 1, 'every busy answer was waited out, then the bytes went');
    assert.ok(patchTimes.at(-1)! - patchTimes[0]! >= busyFor * 1000 - 200, 'each Retry-After was honoured');
    assert.equal(ran.stderr.split('\n').filter((l) => /busy/.test(l)).length, 1, `one line for the wait:\n${ran.stderr}`);
    const res = await fetch(`${node.url}/api/registered${node.home}/held.bin?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes));
  });
});
