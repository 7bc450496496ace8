/**
 * A dependency that is down fails every request until it is back — thousands a minute in an
 * outage — so each is one warning line that says what the dependency said, with no stack,
 * while a failure of lading's own code stays an error with its stack.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LadingError } from '../../src/core/errors.ts';
import { loggerOptions } from '../../src/wiring/logger.ts';
import { startTestServer } from '../helpers/server.ts';

describe('logs of failed requests', () => {
  it('logs a dependency that is down as one warning without a stack, and its own failure as an error with one', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino(loggerOptions('info'), sink);
    const s = await startTestServer({}, { overrides: { logger } });
    try {
      const auth = await s.bearer('ann');
      const backend = s.deps.backend as { stat: (...args: unknown[]) => Promise<unknown> };
      const down = new Error('connect ECONNREFUSED 127.0.0.1:5432') as Error & { code: string };
      down.code = 'ECONNREFUSED';
      backend.stat = async () => { throw new LadingError('UNAVAILABLE', 'The catalog (PostgreSQL) cannot be reached right now; retry later.', { cause: down }); };
      const res = await fetch(s.home('ann', 'x.csv'), { headers: { authorization: auth } });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      await res.arrayBuffer();

      backend.stat = async () => { throw new TypeError('a bug'); };
      const bug = await fetch(s.home('ann', 'y.csv'), { headers: { authorization: auth } });
      assert.equal(bug.status, 500);
      await bug.arrayBuffer();
    } finally {
      await s.stop();
    }
    const dependency = lines.filter((l) => l.msg === 'dependency failed');
    assert.equal(dependency.length, 1, JSON.stringify(lines));
    assert.equal(dependency[0]!.level, 40, 'a warning');
    assert.equal(dependency[0]!.code, 'UNAVAILABLE');
    assert.equal(dependency[0]!.cause, 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432');
    assert.ok(!JSON.stringify(dependency[0]).includes('"stack"'), 'no stack');
    const failed = lines.filter((l) => l.msg === 'request failed');
    assert.equal(failed.length, 1, JSON.stringify(lines));
    assert.equal(failed[0]!.level, 50, 'an error');
    assert.match(JSON.stringify(failed[0]), /"stack"/);
  });
});
