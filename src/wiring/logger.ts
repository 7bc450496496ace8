/**
 * The process's logger from `log.*`: JSON lines for log collectors, or readable lines for a
 * person at a terminal (pino-pretty, loaded only then, so JSON deployments never load it).
 * Cuts credentials out of what it logs; logs nothing itself.
 */
import { destination as pinoDestination, pino, type Logger, type LoggerOptions } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { logSafeUrl } from '../http/log-safe-url.ts';

/** Whether `log.format` gives readable lines: `pretty`, or `auto` on a terminal. */
export function prettyLogs(format: Config['log']['format'], stdout: { isTTY?: boolean } = process.stdout): boolean {
  return format === 'pretty' || (format === 'auto' && stdout.isTTY === true);
}

/**
 * A pino logger at `log.level` writing to standard output in the format `log.format` chooses.
 * Readable lines are written synchronously, one a record (time, level, message, then the
 * record's other fields as JSON on the same line), so they interleave with nothing else.
 */
export async function createLogger(log: Config['log'], stdout: { isTTY?: boolean } = process.stdout): Promise<Logger> {
  const options = loggerOptions(log.level);
  if (!prettyLogs(log.format, stdout)) return bufferedJsonLogger(options);
  const { default: pretty } = await import('pino-pretty');
  return pino(options, pretty({
    sync: true,
    colorize: stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    singleLine: true,
    // NOTE: a request's line already says in its message what `req`, `res` and `responseTime`
    // hold; the request id stays in JSON, where logs are searched, and in X-Request-Id.
    ignore: 'pid,hostname,reqId,req,res,responseTime',
  }));
}

/** Bytes of JSON lines gathered before they are written, and the longest a line waits. */
const LOG_BUFFER_BYTES = 8192;
const LOG_FLUSH_MS = 200;

/**
 * JSON lines on standard output, gathered into writes of `LOG_BUFFER_BYTES` and written at
 * least every `LOG_FLUSH_MS`; a warning or an error is written at once, and whatever is
 * gathered when the process exits. Writes are synchronous, as Node's own for a file or a pipe.
 * NOTE: pino's default writes each line on its own through the thread pool; with a line per
 * request, that hand-off and its wake-up cost about as much CPU as the rest of a metadata GET's
 * own code (bench/README.md).
 */
function bufferedJsonLogger(options: LoggerOptions): Logger {
  const destination = pinoDestination({ fd: 1, sync: true, minLength: LOG_BUFFER_BYTES });
  let pending = false;
  const flush = (): void => {
    if (!pending) return;
    pending = false;
    destination.flush();
  };
  setInterval(flush, LOG_FLUSH_MS).unref();
  process.once('exit', flush);
  return pino({
    ...options,
    hooks: {
      logMethod(args, method, level) {
        method.apply(this, args);
        pending = true;
        if (level >= 40) flush();
      },
    },
  }, destination);
}

/**
 * The options of every lading logger at `level`: what it cuts out (credentials in headers,
 * `password` and `token` fields, secrets in logged URLs) and how it shows a request.
 */
export function loggerOptions(level: Config['log']['level']): LoggerOptions {
  return {
    level,
    // NOTE: only top-level keys, which cost nothing on a line that lacks them. A path below
    // `req` (its headers) would run the redactor on every request's line for nothing: `req`
    // is always logged through the serializer below, which keeps no header.
    redact: { paths: ['password', 'token', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' },
    // NOTE: Fastify's request fields (never its headers), with authorization codes and tokens
    // cut out of query strings, and share links' tokens out of their paths.
    serializers: {
      req: (req: FastifyRequest) => ({
        method: req.method, url: logSafeUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
        user: req.auth?.session.user,
      }),
    },
  };
}
