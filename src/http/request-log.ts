/**
 * A request's logging: its one line once the answer is sent, and the logger its handlers use
 * (`request.log`), made only when a handler logs something of its own.
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { logSafeUrl } from './log-safe-url.ts';

type Bindings = Record<string, unknown>;
type Write = (this: FastifyBaseLogger, ...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * `request.log`: a child of the server's logger carrying the request id, made (`child`) at its
 * first use rather than for every request. Making a pino child (its bindings serialised, its
 * level's methods set up) took ~4% of a metadata GET's CPU, and most requests log only the
 * line `RequestLog` writes, which needs no child (see `line`).
 */
export class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | null = null;

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #made(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#made().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: Parameters<FastifyBaseLogger['child']>[1]): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }

  /**
   * Writes `fields` and `message` at `level` as the child would, with the request's bindings
   * among the fields when no child was made: the same keys in the same JSON line.
   */
  line(level: 'info' | 'error', fields: Bindings, message: string): void {
    if (this.#child) this.#child[level](fields, message);
    else this.#parent[level]({ ...this.#bindings, ...fields }, message);
  }

  #write(level: Level, args: unknown[]): void {
    // NOTE: a level the server's logger writes nothing at needs no child (the multipart
    // parser logs at debug for every form).
    if (!this.#child && (this.#parent as { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.(level) === false) return;
    const logger = this.#made();
    (logger[level] as Write).apply(logger, args);
  }
}

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>;

/**
 * `childLoggerFactory` for `Fastify()`: a `RequestLogger`, or pino's own child at once where a
 * route sets its own level or serialisers (no lading route does).
 */
export const requestLoggerFactory: ChildLoggerFactory = (logger, bindings, options) =>
  options.level !== undefined || options.serializers !== undefined ? logger.child(bindings, options) : new RequestLogger(logger, bindings);

/**
 * One log line per request, written once its answer is sent (instead of Fastify's "incoming
 * request" and "request completed"): method, URL with secrets cut out of the query, status,
 * duration and user in the message, and `req`, `res` and `responseTime` for log collectors.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const user = request.auth?.session.user;
    const line = `${request.method} ${logSafeUrl(request.url)} ${reply.statusCode} in ${Math.round(reply.elapsedTime)} ms${user ? ` (${user})` : ''}`;
    const fields: Bindings = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) fields.err = error;
    const log = reply.log;
    if (log instanceof RequestLogger) log.line(error ? 'error' : 'info', fields, line);
    else if (error) log.error(fields, line);
    else log.info(fields, line);
  }
}
