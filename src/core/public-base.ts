/**
 * The one source of the public base URL that links start with (`link` fields, PID records, the
 * OpenID Connect issuer): the configured URL, else where the server listens (for links made
 * outside a request) or the request's checked Host (for links in a request's answer). It does
 * not read configuration or requests by itself: it is told.
 */
import { LadingError } from './errors.ts';

// NOTE: RFC 3986 host (a reg-name of letters, digits, '-', '_' and '.', an IPv4 address, or a
// bracketed IPv6 address) and an optional port: nothing a link could be made to say by it.
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** The address a server listens on, as `net.Server.address()` gives it. */
export interface ListenAddress {
  address: string;
  family: string;
  port: number;
}

/** What `PublicBase.forRequest` needs of a request. */
export interface RequestOrigin {
  /** `http` or `https` (from the connection, or from X-Forwarded-Proto behind a trusted proxy). */
  protocol: string;
  /** The Host header (or X-Forwarded-Host behind a trusted proxy); empty or undefined when none came. */
  host: string | undefined;
}

export class PublicBase {
  /** The configured public URL (no trailing slash), or null. */
  readonly configured: string | null;
  #listening: string | null = null;

  constructor(configured: string | null) {
    this.configured = configured === null ? null : configured.replace(/\/+$/, '');
  }

  /**
   * Told once, when the server listens; later calls change nothing. An unspecified address
   * (`0.0.0.0`, `::`) is named `127.0.0.1`: it is the only address of it known to reach it.
   */
  listening(at: ListenAddress): void {
    if (this.#listening !== null) return;
    const host = at.address === '0.0.0.0' || at.address === '::' ? '127.0.0.1'
      : at.family === 'IPv6' ? `[${at.address}]` : at.address;
    this.#listening = `http://${host}:${at.port}`;
  }

  /**
   * Checks what a request says about its origin: rejects with `BAD_REQUEST` when the protocol
   * is not http or https, when a Host is given that is not `host[:port]`, or when none is given
   * and links would have to be made from it (no public URL is configured).
   */
  check(origin: RequestOrigin): void {
    if (origin.protocol !== 'http' && origin.protocol !== 'https') {
      throw new LadingError('BAD_REQUEST', 'The forwarded protocol must be http or https.');
    }
    if (!origin.host) {
      if (this.configured === null) throw new LadingError('BAD_REQUEST', 'Send a Host header.');
      return;
    }
    if (!HOST.test(origin.host)) throw new LadingError('BAD_REQUEST', 'The Host header must be host[:port].');
  }

  /** Base for links in the answer to a request that passed `check`: the configured URL, else the request's own. */
  forRequest(origin: RequestOrigin): string {
    return this.configured ?? `${origin.protocol}://${origin.host}`;
  }

  /**
   * Base for links made outside a request (PID records, the OIDC issuer): the configured URL,
   * else where the server listens. Never a request's Host. Rejects with `UNAVAILABLE` before
   * the server listens (with no configured URL).
   */
  outside(): string {
    const base = this.configured ?? this.#listening;
    if (base === null) throw new LadingError('UNAVAILABLE', 'The server is starting; try again in a moment.');
    return base;
  }

  /** Whether `outside()` has an answer. */
  get known(): boolean {
    return this.configured !== null || this.#listening !== null;
  }
}
