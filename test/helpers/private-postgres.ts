/**
 * A PostgreSQL cluster of a test's own, which it may stop and start at will (the shared one at
 * LADING_TEST_PG_URL serves other tests and must never be stopped): created with the Debian
 * server binaries under /usr/lib/postgresql/<version>/bin by `initdb` as the `postgres` user
 * (trust authentication) in a temporary directory, listening on 127.0.0.1 on a free port.
 * Needs root (to act as `postgres`) and the postgresql server package.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './cluster.ts';

const run = promisify(execFile);

export interface PrivatePostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** `pg_ctl -m fast stop`: ends every session (57P01) and waits until the server is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (immediately) and removes its directory. */
  destroy(): Promise<void>;
}

/** The newest server binaries' directory, or null. */
async function serverBin(): Promise<string | null> {
  const base = '/usr/lib/postgresql';
  const versions = await readdir(base).catch(() => [] as string[]);
  for (const v of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = join(base, v, 'bin');
    if (await access(join(bin, 'initdb'), constants.X_OK).then(() => true, () => false)) return bin;
  }
  return null;
}

/**
 * Creates and starts a private cluster; resolves with it, or with the reason it cannot (no
 * server binaries, not root, no `postgres` user, initdb or the start failed).
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres | string> {
  const bin = await serverBin();
  if (!bin) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)';
  if (process.getuid?.() !== 0) return `needs root to run initdb as the postgres user (running as ${userInfo().username})`;
  const ids = await run('id', ['-u', 'postgres']).then(async ({ stdout }) => ({
    uid: Number(stdout.trim()), gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  }), () => null);
  if (!ids) return 'no `postgres` user to run the server as';
  const dir = await mkdtemp(join(tmpdir(), 'lading-pg-'));
  await chown(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { cwd: dir });
  const ctl = (...args: string[]) => asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), ...args]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  try {
    await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await ctl('-o', options, '-w', '-t', '60', 'start');
  } catch (err) {
    await ctl('-m', 'immediate', 'stop').catch(() => {});
    await rm(dir, { recursive: true, force: true });
    const e = err as { stderr?: string; message?: string };
    return `cannot create a private PostgreSQL cluster: ${(e.stderr || e.message || String(err)).trim()}`;
  }
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async stop() { await ctl('-m', 'fast', '-w', '-t', '60', 'stop'); },
    async start() { await ctl('-o', options, '-w', '-t', '60', 'start'); },
    async destroy() {
      await ctl('-m', 'immediate', 'stop').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
