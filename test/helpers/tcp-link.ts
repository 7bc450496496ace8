/**
 * A TCP relay to a server (PostgreSQL) that a test can break as a server stopping or a network
 * failing would: cut every connection through it, refuse new ones for a while, or cut one
 * connection right after the client sent given bytes (a COMMIT whose answer never arrives).
 * Touches nothing but the connections made through it, so a shared server stays untouched.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

export interface TcpLink {
  /** The relay's port on 127.0.0.1. */
  port: number;
  /** Ends every connection through the relay at once, both ways. */
  cut(): void;
  /** While on, connections made to the relay are closed as soon as they are accepted. */
  refuse(on: boolean): void;
  /**
   * The next time a client sends bytes containing `marker`, they are passed on and that
   * connection is cut before any answer can come back. Resolves once that has happened.
   */
  cutAfter(marker: Buffer): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpLink(target: { host: string; port: number }): Promise<TcpLink> {
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  let trap: { marker: Buffer; done: () => void } | null = null;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      if (trap && chunk.includes(trap.marker)) {
        const { done } = trap;
        trap = null;
        // NOTE: the client side goes at once; the server gets the bytes, then its end.
        client.destroy();
        upstream.end();
        done();
      }
    });
    upstream.on('data', (chunk: Buffer) => { if (!client.destroyed) client.write(chunk); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = (): void => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut,
    refuse(on) { refusing = on; },
    cutAfter(marker) {
      return new Promise((resolve) => { trap = { marker, done: resolve }; });
    },
    async close() {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
