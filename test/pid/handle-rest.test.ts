import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHandleRestProvider } from '../../src/drivers/pid/handle-rest.ts';
import { startHandleDouble, type HandleDouble } from './handle-double.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';

describe('Handle.net REST PID provider (against a test double of the handle server API)', () => {
  let double: HandleDouble;
  before(async () => { double = await startHandleDouble('300:21.T12345/ADMIN', 's3cret'); });
  after(() => double.close());

  it('creates, reads and replaces a handle record with B2SAFE value indexes and HS_ADMIN', async () => {
    const p = createHandleRestProvider({ baseUrl: double.url, prefix: '21.T12345', username: '300:21.T12345/ADMIN', password: 's3cret' });
    assert.equal(await p.resolve('21.T12345/abc'), null);
    await p.put('21.T12345/abc', { URL: 'https://x/api/registered/a', 'EUDAT/CHECKSUM': 'sha2:AAA', 'EUDAT/ROR': '21.T12345/abc' });
    assert.deepEqual(await p.resolve('21.T12345/abc'), { URL: 'https://x/api/registered/a', 'EUDAT/CHECKSUM': 'sha2:AAA', 'EUDAT/ROR': '21.T12345/abc' });
    const stored = double.records.get('21.T12345/abc')!;
    assert.equal(stored.find((v) => v.type === 'URL')?.index, 1);
    assert.equal(stored.find((v) => v.type === 'EUDAT/CHECKSUM')?.index, 2);
    assert.ok(stored.some((v) => v.type === 'HS_ADMIN' && v.index === 100));
    await p.put('21.T12345/abc', { URL: 'https://x/api/registered/b', 'EUDAT/ROR': '21.T12345/abc' });
    assert.equal((await p.resolve('21.T12345/abc'))?.URL, 'https://x/api/registered/b');
    assert.ok(double.writes.every((w) => w.overwrite), 'writes are idempotent (overwrite=true)');
  });

  it('reports wrong credentials, and an unreachable server as UNAVAILABLE', async () => {
    const wrong = createHandleRestProvider({ baseUrl: double.url, prefix: '21.T12345', username: '300:21.T12345/ADMIN', password: 'nope' });
    await rejectsWith(wrong.put('21.T12345/x', { URL: 'u' }), 'INTERNAL');
    const gone = createHandleRestProvider({ baseUrl: 'http://127.0.0.1:9', prefix: '21.T12345', username: 'a', password: 'b' });
    await rejectsWith(gone.put('21.T12345/x', { URL: 'u' }), 'UNAVAILABLE');
    await rejectsWith(gone.resolve('21.T12345/x'), 'UNAVAILABLE');
  });

  it('refuses to be created without its options', () => {
    assert.throws(() => createHandleRestProvider({ baseUrl: '', prefix: 'p', username: 'u', password: 'x' }), /baseUrl/);
  });
});
