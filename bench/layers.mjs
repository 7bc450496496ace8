/**
 * Benchmark peer for bench/metadata-layers.sh: the layers under lading's metadata GET, each
 * answering every GET with the same bytes (a file lading answered before, read once at start),
 * so the script can show what each layer costs per request on this machine:
 *
 * - `node`: a bare `node:http` server; one `writeHead` and one `end` (the socket write, which
 *   every server pays, and Node's HTTP parsing).
 * - `fastify`: Fastify (lading's version) with one wildcard route returning the parsed JSON,
 *   serialised against a response schema, and a request id from `randomUUID` in `X-Request-Id`,
 *   as lading's routes do.
 * - `fastify-log`: the same and one pino JSON line per request, written as lading's logger
 *   writes them (synchronously, gathered into writes of 8 KiB) to standard output.
 *
 * No authentication, no catalog, no path handling: what lading adds is the difference between
 * the last row and lading's own.
 *
 * Usage: node bench/layers.mjs <node|fastify|fastify-log> <answer.json> <port>
 *   (listens on 127.0.0.1 only)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [mode, file, portArg] = process.argv.slice(2);
if (!['node', 'fastify', 'fastify-log'].includes(mode) || !file || !portArg) {
  console.error('usage: node bench/layers.mjs <node|fastify|fastify-log> <answer.json> <port>');
  process.exit(2);
}
const port = Number(portArg);
const text = readFileSync(file, 'utf8');
process.on('SIGTERM', () => process.exit(0));

if (mode === 'node') {
  const length = Buffer.byteLength(text);
  createServer((req, res) => {
    res.writeHead(200, { 'x-request-id': randomUUID(), 'content-type': 'application/json; charset=utf-8', 'content-length': length });
    res.end(text);
  }).listen(port, '127.0.0.1');
} else {
  const { default: Fastify, LogController } = await import('fastify');
  let loggerOptions = { logger: false };
  if (mode === 'fastify-log') {
    const { pino, destination } = await import('pino');
    const out = destination({ fd: 1, sync: true, minLength: 8192 });
    setInterval(() => out.flush(), 200).unref();
    process.once('exit', () => out.flush());
    loggerOptions = {
      loggerInstance: pino({
        level: 'info',
        serializers: { req: (req) => ({ method: req.method, url: req.url, host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort }) },
      }, out),
      // One line when the answer is sent, as lading's request log (src/http/app.ts).
      logController: new (class extends LogController {
        incomingRequest() {}
        requestCompleted(error, request, reply) {
          const line = `${request.method} ${request.url} ${reply.statusCode} in ${Math.round(reply.elapsedTime)} ms`;
          reply.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, line);
        }
      })(),
    };
  }
  const app = Fastify({ ...loggerOptions, genReqId: () => randomUUID() });
  const answer = JSON.parse(text);
  const schema = { response: { 200: { type: 'object', additionalProperties: true } } };
  app.get('/*', { schema }, async (request, reply) => {
    reply.header('x-request-id', request.id);
    return answer;
  });
  await app.listen({ host: '127.0.0.1', port });
}
