/**
 * PID provider for a Handle.net server (handle server v9 JSON REST API), with the prefix
 * administrator's credentials: `PUT /api/handles/<handle>?overwrite=true` creates or replaces
 * a record, `GET /api/handles/<handle>` reads it. Adapts that HTTP API only.
 */
import { LadingError } from '../../core/errors.ts';
import type { PidProvider } from '../../core/ports.ts';
import type { HandleValues } from '../../core/types.ts';
import { PidOptionError, checkPrefix } from './options.ts';

export interface HandleRestOptions {
  /** e.g. `https://hdl.example.org:8000` */
  baseUrl: string;
  prefix: string;
  /** The admin handle and index, e.g. `300:21.T12345/ADMIN`. */
  username: string;
  password: string;
  fetch?: typeof fetch;
}

// B2SAFE's value indexes, so records look the same whichever service wrote them.
const INDEX: Record<string, number> = { URL: 1, 'EUDAT/CHECKSUM': 2, 'EUDAT/CHECKSUM_TIMESTAMP': 3, 'EUDAT/ROR': 4 };

interface HandleValue {
  index: number;
  type: string;
  data: { format: string; value: unknown };
}

const PROVIDER = 'Handle REST PID provider';

/**
 * Throws `PidOptionError` naming the option when `baseUrl` is not an http(s) URL, `prefix` is
 * empty or contains '/', or `username` or `password` is empty. Contacts the server only when used.
 */
export function createHandleRestProvider(o: HandleRestOptions): PidProvider {
  if (!o.baseUrl) throw new PidOptionError(PROVIDER, 'baseUrl', 'is required');
  if (!/^https?:$/.test(URL.parse(o.baseUrl)?.protocol ?? '')) throw new PidOptionError(PROVIDER, 'baseUrl', 'must be an http(s) URL');
  checkPrefix(PROVIDER, o.prefix);
  if (!o.username) throw new PidOptionError(PROVIDER, 'username', 'is required');
  if (!o.password) throw new PidOptionError(PROVIDER, 'password', 'is required');
  const doFetch = o.fetch ?? fetch;
  const base = o.baseUrl.replace(/\/+$/, '');
  const authorization = 'Basic ' + Buffer.from(`${encodeURIComponent(o.username)}:${encodeURIComponent(o.password)}`).toString('base64');
  const url = (handle: string) => `${base}/api/handles/${handle.split('/').map(encodeURIComponent).join('/')}`;

  const call = async (handle: string, init: RequestInit): Promise<Response> => {
    try {
      return await doFetch(url(handle) + (init.method === 'PUT' ? '?overwrite=true' : ''), {
        ...init, headers: { authorization, 'content-type': 'application/json', accept: 'application/json', ...init.headers },
        signal: AbortSignal.timeout(30_000),
      });
    } catch (cause) {
      throw new LadingError('UNAVAILABLE', 'The handle server cannot be reached.', { cause });
    }
  };

  return {
    prefix: o.prefix,
    async put(handle, values) {
      let next = 5;
      const list: HandleValue[] = Object.entries(values).map(([type, value]) => ({
        index: INDEX[type] ?? next++, type, data: { format: 'string', value },
      }));
      list.push({ index: 100, type: 'HS_ADMIN', data: { format: 'admin', value: { handle: `0.NA/${o.prefix}`, index: 200, permissions: '011111110011' } } });
      const res = await call(handle, { method: 'PUT', body: JSON.stringify({ values: list }) });
      if (res.status === 200 || res.status === 201) return;
      const text = await res.text().catch(() => '');
      throw new LadingError(res.status >= 500 ? 'UNAVAILABLE' : 'INTERNAL', `The handle server refused to write ${handle} (HTTP ${res.status}): ${text.slice(0, 200)}`);
    },
    async resolve(handle) {
      const res = await call(handle, { method: 'GET' });
      if (res.status === 404) return null;
      if (res.status !== 200) throw new LadingError('UNAVAILABLE', `The handle server answered HTTP ${res.status} for ${handle}.`);
      const body = (await res.json()) as { values?: HandleValue[] };
      const out: HandleValues = {};
      for (const v of body.values ?? []) {
        if (v.type !== 'HS_ADMIN' && typeof v.data?.value === 'string') out[v.type] = v.data.value;
      }
      return out;
    },
  };
}
