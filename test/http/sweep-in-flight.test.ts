/**
 * The periodic sweeper never removes an upload this node is still writing, however old it is
 * and however short `recovery.grace`: the node's own heartbeat keeps it, and the upload
 * commits whole. What a dead writer left is removed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { recoveryCutoff } from '../../src/wiring/drivers.ts';
import { heldUpload, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let alice: string;

before(async () => {
  s = await startTestServer({ 'recovery.grace': 0 });
  alice = await s.bearer('alice');
});

after(() => s.stop());

describe('the sweeper and uploads in flight', () => {
  it('keeps an upload in flight and removes what a dead writer left', async () => {
    const past = new Date(Date.now() - 3_600_000);
    await s.deps.catalog.heartbeat('dead-writer', past);
    await s.deps.catalog.trackBlob('left-by-dead-writer', past, 'dead-writer');
    await s.deps.resource.write('left-by-dead-writer', Readable.from([Buffer.from('left behind')]));
    const head = randomBytes(1024 * 1024);
    const tail = randomBytes(1024);
    const upload = heldUpload(s.home('alice', 'in-flight.bin'), alice);
    upload.write(head);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const swept = await s.deps.backend.sweep(recoveryCutoff(s.deps.config, new Date(), false));
    assert.equal(swept, 1, 'only the dead writer\'s leftover');
    assert.equal(await s.deps.resource.size('left-by-dead-writer'), null);
    upload.end(tail);
    const res = await upload.answer;
    assert.equal(res.status, 200, res.body);
    const expected = `sha2:${createHash('sha256').update(Buffer.concat([head, tail])).digest('base64')}`;
    assert.equal(JSON.parse(res.body).Response.data.checksum, expected);
  });
});
