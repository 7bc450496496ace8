/**
 * A damaged byte is caught either way. Up: the real CLI uploads a file through the resumable
 * endpoint to a real `lading serve`, through a proxy that flips one byte of one request body.
 * The last request announces the file's SHA-256 (Repr-Digest), so the server refuses to make
 * the data object: damage in the last request is mended by sending it again; damage in an
 * earlier one ends in exit 6 (integrity) with the upload removed and nothing stored. The same
 * upload without the proxy succeeds with the file's checksum.
 * Down: an object large enough to be hashed by the second thread, one byte flipped on the
 * server's disk, is refused with exit 6 and leaves nothing behind.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { open, readdir, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Node, events, runCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;

describe('lading put and get of a damaged byte', { timeout: 120_000 }, () => {
  let node: Node;
  let proxy: http.Server;
  let proxyUrl: string;
  let patches = 0;
  /** Which PATCH request (counted from 1) the proxy damages. */
  let damaged = 2;

  before(async () => {
    node = await startNode();
    const target = new URL(node.env.LADING_URL!);
    // Forwards everything; flips the 1000th byte of the `damaged`th PATCH body.
    proxy = http.createServer((req, res) => {
      const damage = req.method === 'PATCH' && ++patches === damaged;
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      let seen = 0;
      req.on('data', (chunk: Buffer) => {
        if (damage && seen <= 1000 && seen + chunk.length > 1000) {
          chunk = Buffer.from(chunk);
          chunk[1000 - seen]! ^= 0xff;
        }
        seen += chunk.length;
        out.write(chunk);
      });
      req.on('end', () => out.end());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await node?.stop();
  });

  const api = (path: string) => fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${node.token}` } });

  it('exits 6 when an earlier request was damaged, with nothing stored and the upload removed; succeeds without the damage', async () => {
    const file = join(node.dir, 'three.bin');
    const bytes = randomBytes(3 * MIB);
    await writeFile(file, bytes);
    const args = ['put', '--json', '--resumable-above', '1', '--chunk-size', '1', file, `${node.home}/three.bin`];
    patches = 0;
    damaged = 2;

    const refused = await runCli(args, { ...node.env, LADING_URL: proxyUrl });
    assert.ok(patches >= 4, `the proxy saw ${patches} PATCH requests: three, and the last once more`);
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /other than .*three\.bin's .*Repr-Digest.*nothing was stored: run the command again/);
    assert.equal((await api(`/api/registered${node.home}/three.bin`)).status, 404, 'the damaged object never became visible');
    assert.deepEqual((await (await api('/api/uploads')).json() as { Response: { data: unknown[] } }).Response.data, [], 'no upload is left behind');

    const clean = await runCli(args, node.env);
    assert.equal(clean.code, 0, clean.stderr);
    const done = events(clean).find((e) => e.event === 'done')!;
    assert.equal(done.sha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal((await api(`/api/registered${node.home}/three.bin`)).status, 200);
  });

  it('sends the last request again when it was the damaged one, and stores the file whole', async () => {
    const file = join(node.dir, 'mended.bin');
    const bytes = randomBytes(3 * MIB);
    await writeFile(file, bytes);
    patches = 0;
    damaged = 3;
    const ran = await runCli(['put', '--json', '--resumable-above', '1', '--chunk-size', '1', file, `${node.home}/mended.bin`], { ...node.env, LADING_URL: proxyUrl });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(patches, 4, 'three requests, and the last once more');
    const done = events(ran).find((e) => e.event === 'done')!;
    assert.equal(done.sha256, createHash('sha256').update(bytes).digest('hex'));
    const record = await (await api(`/api/registered${node.home}/mended.bin`)).json() as { Response: { data: Record<string, { metadata: { checksum: string } }>[] } };
    assert.equal(record.Response.data[0]!['mended.bin']!.metadata.checksum, `sha2:${createHash('sha256').update(bytes).digest('base64')}`);
  });

  it('a large object damaged on the server is refused on download: exit 6, nothing left under its name', async () => {
    const file = join(node.dir, 'large.bin');
    const size = 20 * MIB;
    await writeFile(file, randomBytes(size));
    const up = await runCli(['put', file, `${node.home}/large.bin`], node.env);
    assert.equal(up.code, 0, up.stderr);
    let blob = '';
    for (const e of await readdir(join(node.data, 'resource', 'blobs'), { recursive: true, withFileTypes: true })) {
      if (e.isFile() && (await stat(join(e.parentPath, e.name))).size === size) blob = join(e.parentPath, e.name);
    }
    assert.ok(blob, 'the blob was found');
    const handle = await open(blob, 'r+');
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, 17 * MIB);
    byte[0]! ^= 0xff;
    await handle.write(byte, 0, 1, 17 * MIB);
    await handle.close();

    const target = join(node.dir, 'large-back.bin');
    const down = await runCli(['get', `${node.home}/large.bin`, target], node.env);
    assert.equal(down.code, 6, down.stderr);
    assert.match(down.stderr, /^lading: .*refused/m);
    await assert.rejects(stat(target), { code: 'ENOENT' });
    await assert.rejects(stat(`${target}.lading-part`), { code: 'ENOENT' });
  });
});
