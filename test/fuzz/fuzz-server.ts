/**
 * Starts the test server the fuzzer drives and gathers what it needs to know of it: the
 * operations of its live `/api/specs` document and the credentials plans name (a user, another
 * user, a revoked token, the CA issuer's secret, a CSR for the CA). Sends no fuzzed request.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '../../src/identity/x509/x509.ts';
import { csrFor } from '../credentials/pki.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type OpenApiDocument, operationsOf } from './openapi-document.ts';
import type { FuzzTarget } from './scenario-runner.ts';

// PIDs are assigned on creation so that /api/pids and /api/handles get real PIDs to resolve.
const RULES = `
object.created      /tz/home/**   pid.register
object.overwritten  /tz/home/**   pid.update
object.renamed      /tz/home/**   pid.update
collection.renamed  /tz/home/**   pid.update
`;

export interface FuzzServer {
  server: TestServer;
  target: FuzzTarget;
  stop(): Promise<void>;
}

/** A server in zone `tz` with users alice (the fuzzing user), bob and carol (logged out). */
export async function startFuzzServer(): Promise<FuzzServer> {
  const rulesDir = await mkdtemp(join(tmpdir(), 'lading-fuzz-'));
  await writeFile(join(rulesDir, 'rules.txt'), RULES);
  const server = await startTestServer({
    'pid.rules': join(rulesDir, 'rules.txt'),
    'pid.await_timeout': 2,
    'resource.fsync': false,
    // NOTE: the fuzzer sends many wrong passwords from one address; with the default limit the
    // account would be locked and no fresh login (for logout) would reach the handler.
    'oidc.max_failed_logins': 1e9,
  });
  const user = await server.bearer('alice');
  const otherUser = await server.bearer('bob');
  await server.addUser('carol');
  const revoked = `Bearer ${await server.login('carol')}`;
  const out = await fetch(`${server.url}/auth/logout`, { method: 'POST', headers: { authorization: revoked } });
  assert.equal(out.status, 200, 'logging carol out');
  const secret = await readFile(join(server.dataDir, 'keys', 'ca-issuer.secret'), 'utf8');
  const doc = (await (await fetch(`${server.url}/api/specs`)).json()) as OpenApiDocument;
  return {
    server,
    target: {
      base: server.url,
      home: `/${server.zone}/home/alice`,
      operations: operationsOf(doc),
      creds: {
        user, otherUser, revoked,
        issuer: `Bearer ${secret.split('\n', 1)[0]!.trim()}`,
        fresh: async () => `Bearer ${await server.login('alice')}`,
        csr: await csrFor('alice', await generateKeyPair()),
      },
    },
    async stop() {
      await server.stop();
      await rm(rulesDir, { recursive: true, force: true });
    },
  };
}
