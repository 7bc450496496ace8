/**
 * The process's logger from `log.*`: JSON lines for log collectors, or readable lines for a
 * person at a terminal (pino-pretty, loaded only then, so JSON deployments never load it).
 * Cuts credentials out of what it logs; logs nothing itself.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import { logSafeUrl } from '../http/routes-oidc.ts';

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
  if (!prettyLogs(log.format, stdout)) return pino(options);
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

/**
 * The options of every lading logger at `level`: what it cuts out (credentials in headers,
 * `password` and `token` fields, secrets in logged URLs) and how it shows a request.
 */
export function loggerOptions(level: Config['log']['level']): LoggerOptions {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'password', 'token'], censor: '[redacted]' },
    // NOTE: Fastify's request fields, with authorization codes and tokens cut out of query
    // strings, and share links' tokens out of their paths.
    serializers: {
      req: (req: FastifyRequest) => ({
        method: req.method, url: logSafeUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
        user: req.auth?.session.user,
      }),
    },
  };
}
