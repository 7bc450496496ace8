/**
 * Test double of a Handle.net server's REST API (handle server v9 JSON shape): PUT/GET/DELETE
 * on /api/handles/<prefix>/<suffix> with HTTP Basic authentication of the prefix admin. No real
 * handle server can run on this machine; this implements the documented request and response
 * shapes so the client is exercised over a real socket.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface HandleDouble {
  url: string;
  records: Map<string, { index: number; type: string; data: { format: string; value: unknown } }[]>;
  /** Every write received, in order (handle and values). */
  writes: { handle: string; overwrite: boolean }[];
  /** Hold the next `n` PUT requests until `release()` (to simulate a slow or crashing peer). */
  hold(n: number): void;
  /** How many PUT requests are being held right now. */
  held(): number;
  release(): void;
  close(): Promise<void>;
}

export async function startHandleDouble(username: string, password: string): Promise<HandleDouble> {
  const records: HandleDouble['records'] = new Map();
  const writes: HandleDouble['writes'] = [];
  let holding = 0;
  let waiters: (() => void)[] = [];
  const expected = 'Basic ' + Buffer.from(`${encodeURIComponent(username)}:${encodeURIComponent(password)}`).toString('base64');
  const body = async (req: IncomingMessage) => {
    let text = '';
    for await (const c of req) text += String(c);
    return text;
  };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/api\/handles\/(.+)$/.exec(url.pathname);
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (!m) return send(404, { responseCode: 102 });
    const handle = decodeURIComponent(m[1]!);
    if (req.method === 'GET') {
      const values = records.get(handle);
      return values ? send(200, { responseCode: 1, handle, values }) : send(404, { responseCode: 100, handle });
    }
    if (req.headers.authorization !== expected) return send(401, { responseCode: 402, handle });
    if (req.method === 'PUT') {
      const parsed = JSON.parse(await body(req)) as { values: { index: number; type: string; data: { format: string; value: unknown } }[] };
      if (holding > 0) {
        holding--;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      const overwrite = url.searchParams.get('overwrite') === 'true';
      writes.push({ handle, overwrite });
      if (records.has(handle) && !overwrite) return send(409, { responseCode: 101, handle });
      const created = !records.has(handle);
      records.set(handle, parsed.values);
      return send(created ? 201 : 200, { responseCode: 1, handle });
    }
    if (req.method === 'DELETE') {
      records.delete(handle);
      return send(200, { responseCode: 1, handle });
    }
    return send(405, { responseCode: 2 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const release = () => {
    for (const w of waiters) w();
    waiters = [];
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    records,
    writes,
    hold(n) { holding = n; },
    held() { return waiters.length; },
    release,
    async close() {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
