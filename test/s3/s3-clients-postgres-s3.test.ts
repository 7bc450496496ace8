/**
 * The S3 clients from Debian (see `s3-clients-suite.ts`) against two lading nodes sharing a
 * PostgreSQL catalog and an S3 object store (and one data directory, for the master key that
 * seals S3 secrets): each client writes through one node and reads through the other, and a
 * key revoked on one is refused by both. Needs `.ci/services/postgres.sh` and
 * `.ci/services/swift.sh`; skips without them, except under CI, where that fails.
 */
import { after, before } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { s3ClientsSuite } from './s3-clients-suite.ts';

const services = postgresS3('S3 clients on PostgreSQL and S3, two nodes', 'the S3 clients on PostgreSQL and S3 need', 's3front');
if (services) {
  let dir: string;
  const nodes: TestServer[] = [];
  let bearer: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-s3-nodes-'));
    const flags = {
      's3.listen': '127.0.0.1:0', zone: 'lading', 'pid.rules': join(import.meta.dirname, '..', '..', 'examples', 'rules.txt'),
      ...services.flags,
    };
    nodes.push(await startTestServer(flags, { dataDir: dir, keepData: true }));
    nodes.push(await startTestServer(flags, { dataDir: dir, keepData: true }));
    bearer = await nodes[0]!.bearer('alice');
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    await services.dropSchema();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  s3ClientsSuite('PostgreSQL and S3, two nodes', () => ({ s3Urls: nodes.map((n) => n.s3Url!), apiUrl: nodes[1]!.url, bearer, pids: true }));
}
