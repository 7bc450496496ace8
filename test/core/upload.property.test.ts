/**
 * Property tests of uploads through the whole HTTP stack: for random contents cut into random
 * chunks, the stored checksum and size are those of the content; a body over the limit or
 * with a wrong digest stores nothing.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

const LIMIT = 64 * 1024;

describe('upload properties', () => {
  let s: TestServer;
  let auth: string;
  let n = 0;
  before(async () => {
    s = await startTestServer({ 'limits.upload_bytes': LIMIT });
    auth = await s.bearer('prop');
  });
  after(() => s.stop());

  const chunked = (content: Uint8Array, cuts: number[]) => {
    const points = [...new Set(cuts.map((c) => c % (content.length + 1)))].sort((a, b) => a - b);
    const parts: Uint8Array[] = [];
    let prev = 0;
    for (const p of [...points, content.length]) {
      parts.push(content.subarray(prev, p));
      prev = p;
    }
    return new ReadableStream<Uint8Array>({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } });
  };

  it('stores exactly the bytes sent, however the body is chunked', async () => {
    await fc.assert(fc.asyncProperty(
      fc.uint8Array({ maxLength: LIMIT + 2048 }), fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(),
      async (content, cuts, announce) => {
        const name = `p${n++}.bin`;
        const digest = createHash('sha256').update(content).digest('base64');
        const headers: Record<string, string> = { authorization: auth, 'content-type': 'application/octet-stream' };
        if (announce) headers['content-digest'] = `sha-256=:${digest}:`;
        const res = await fetch(s.home('prop', name), { method: 'PUT', headers, body: chunked(content, cuts), duplex: 'half' } as RequestInit);
        const body = await json(res);
        if (content.length > LIMIT) {
          assert.equal(res.status, 413);
          assert.equal((await fetch(s.home('prop', name), { headers: { authorization: auth } })).status, 404);
          return;
        }
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.Response.data.checksum, `sha2:${digest}`);
        const back = Buffer.from(await (await fetch(`${s.home('prop', name)}?download=true`, { headers: { authorization: auth } })).arrayBuffer());
        assert.ok(back.equals(Buffer.from(content)));
      },
    ), { numRuns: 40 });
  });

  it('a wrong announced digest stores nothing, whatever the content', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 4096 }), async (content) => {
      const name = `w${n++}.bin`;
      const wrong = createHash('sha256').update(content).update('x').digest('base64');
      const res = await fetch(s.home('prop', name), {
        method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream', 'repr-digest': `sha-256=:${wrong}:` }, body: content,
      });
      assert.equal(res.status, 400);
      assert.equal((await fetch(s.home('prop', name), { headers: { authorization: auth } })).status, 404);
    }), { numRuns: 20 });
    assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
  });
});
