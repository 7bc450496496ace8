/**
 * The last request answered stays reachable while the server is idle, and no other: a full
 * collection at idle then leaves the hidden classes of the request path's objects alive, so V8
 * keeps the code compiled against them (bench/README.md), and only one request's objects are
 * held.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { gc } from '../helpers/gc.ts';
import { rawRequest, startTestServer, type TestServer } from '../helpers/server.ts';

/** Collects fully, in turns of its own, until what can die has died. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await nextTurn();
    gc({ type: 'major' });
  }
  await nextTurn();
}

describe('the last request answered', () => {
  let server: TestServer;
  let seen: WeakRef<IncomingMessage>[] = [];
  before(async () => {
    server = await startTestServer();
    server.app.server.on('request', (req: IncomingMessage) => seen.push(new WeakRef(req)));
  });
  after(() => server.stop());

  it('stays reachable once the server is idle, and the one before it does not', async () => {
    seen = [];
    // NOTE: a connection of its own each, closed after the answer, so that no socket's parser
    // holds a request either.
    for (let i = 0; i < 3; i++) {
      const res = await rawRequest(server.url, 'GET', '/api/status', { connection: 'close' });
      assert.equal(res.status, 200);
    }
    await collect();
    assert.equal(seen.length, 3);
    assert.equal(seen[0]!.deref(), undefined, 'the first request was collected');
    assert.equal(seen[1]!.deref(), undefined, 'the second request was collected');
    assert.notEqual(seen[2]!.deref(), undefined, 'the last request is kept');
  });
});
