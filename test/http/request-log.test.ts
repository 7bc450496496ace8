/**
 * A request's logger is made only when its handler logs, and its lines are the same either
 * way: the request line carries the request id, and so does every line the handler writes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { loggerOptions } from '../../src/wiring/logger.ts';
import { RequestLog, requestLoggerFactory } from '../../src/http/request-log.ts';

function server() {
  const lines: Record<string, any>[] = [];
  const out = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  const logger = pino(loggerOptions('info'), out);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => { children++; return child(...args); }) as typeof logger.child;
  const app = Fastify({ loggerInstance: logger, logController: new RequestLog(), childLoggerFactory: requestLoggerFactory });
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/talks', async (request) => {
    request.log.debug('below the level: no line, no child');
    request.log.info({ step: 1 }, 'first');
    request.log.warn('second');
    return { ok: true };
  });
  app.get('/below', async (request) => {
    request.log.debug('below the level');
    request.log.trace('below the level');
    return { ok: true };
  });
  app.get('/fails', async () => { throw new Error('boom'); });
  // NOTE: Fastify makes a child of the logger it is given once, when it starts.
  children = 0;
  return { app, lines, children: () => children };
}

describe('request log', () => {
  it('writes a quiet request\'s line without making a child logger, with the request id', async () => {
    const { app, lines, children } = server();
    const res = await app.inject({ url: '/quiet' });
    assert.equal(res.statusCode, 200);
    assert.equal(children(), 0);
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line!.reqId, 'req-1');
    assert.equal(line!.level, 30);
    assert.match(line!.msg, /^GET \/quiet 200 in \d+ ms$/);
    assert.equal(line!.req.method, 'GET');
    assert.equal(line!.req.url, '/quiet');
    assert.equal(line!.res.statusCode, 200);
    assert.equal(typeof line!.responseTime, 'number');
    assert.equal(Object.keys(line!).filter((k) => k === 'reqId').length, 1);
  });

  it('makes no child for lines below the level', async () => {
    const { app, lines, children } = server();
    await app.inject({ url: '/below' });
    assert.equal(children(), 0);
    assert.deepEqual(lines.map((l) => l.reqId), ['req-1']);
  });

  it('makes one child for a request that logs, and every line of it has the request id', async () => {
    const { app, lines, children } = server();
    await app.inject({ url: '/talks' });
    assert.equal(children(), 1);
    assert.deepEqual(lines.map((l) => [l.msg.replace(/\d+ ms$/, 'N ms'), l.reqId, l.level]), [
      ['first', 'req-1', 30], ['second', 'req-1', 40], ['GET /talks 200 in N ms', 'req-1', 30],
    ]);
    assert.equal(lines[0]!.step, 1);
  });

  it('gives a failed request\'s error line the request id too', async () => {
    const { app, lines } = server();
    const res = await app.inject({ url: '/fails' });
    assert.equal(res.statusCode, 500);
    const failed = lines.filter((l) => l.level === 50);
    assert.equal(failed.length, 1, JSON.stringify(lines));
    assert.equal(failed[0]!.err.message, 'boom');
    assert.equal(failed[0]!.reqId, 'req-1');
    assert.equal(lines.at(-1)!.reqId, 'req-1');
    assert.match(lines.at(-1)!.msg, /^GET \/fails 500 in \d+ ms$/);
  });
});
