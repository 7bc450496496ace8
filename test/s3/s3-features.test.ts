/**
 * The S3 front's addressing and object features beyond the basics, on one in-process node:
 * virtual-hosted-style requests below `s3.domain` (the AWS SDK for JavaScript addressing
 * `alice.s3.test`, resolved to the listener, and curl's own SigV4), path-style beside them;
 * buckets the operator binds to collections (`s3.buckets`), under those collections' access.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import type { LookupFunction } from 'node:net';
import { S3Client, GetObjectCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { parsePath } from '../../src/core/path.ts';
import { hostedBucket } from '../../src/s3/s3-front.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeKey, run } from './s3-clients-suite.ts';

/** Resolves every name to 127.0.0.1, as a wildcard DNS record of the domain would. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  const cb = callback as (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;
  if ((options as { all?: boolean }).all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
};

describe('S3 front features', () => {
  let server: TestServer;
  let bearer: string;
  let key: { id: string; secret: string };
  let port: string;
  let agent: Agent;
  let hosted: S3Client;
  let pathStyle: S3Client;

  before(async () => {
    server = await startTestServer({
      's3.listen': '127.0.0.1:0', 's3.domain': 's3.test', zone: 'lading', 's3.buckets': 'shared-data=/lading/projects/shared, closed=/lading/projects/closed',
    });
    bearer = await server.bearer('alice');
    key = await makeKey(server.url, bearer, 'features');
    port = new URL(server.s3Url!).port;
    agent = new Agent({ lookup: toLoopback });
    const credentials = { accessKeyId: key.id, secretAccessKey: key.secret };
    hosted = new S3Client({ endpoint: `http://s3.test:${port}`, region: 'us-east-1', forcePathStyle: false, credentials, requestHandler: { httpAgent: agent } });
    pathStyle = new S3Client({ endpoint: server.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials });
  });
  after(async () => {
    hosted?.destroy();
    pathStyle?.destroy();
    agent?.destroy();
    await server?.stop();
  });

  it('reads the bucket from a Host below s3.domain, whatever its case and port, and nothing else', () => {
    assert.equal(hostedBucket('s3.test', 'alice.s3.test:9000'), 'alice');
    assert.equal(hostedBucket('s3.test', 'Alice.S3.Test'), 'alice');
    assert.equal(hostedBucket('s3.test', 's3.test:9000'), null, 'the domain itself is path-style');
    assert.equal(hostedBucket('s3.test', '127.0.0.1:9000'), null);
    assert.equal(hostedBucket('s3.test', 'alice.s3.testx'), null);
    assert.equal(hostedBucket(null, 'alice.s3.test'), null, 'no domain: path-style only');
  });

  it('serves virtual-hosted-style requests of the AWS SDK, and path-style ones beside them', async () => {
    const seen: string[] = [];
    hosted.middlewareStack.add((next) => async (args) => {
      const request = args.request as { hostname?: string; path?: string };
      seen.push(`${request.hostname} ${request.path}`);
      return next(args);
    }, { step: 'finalizeRequest', name: 'recordHost' });
    await hosted.send(new PutObjectCommand({ Bucket: 'alice', Key: 'vh/one.txt', Body: 'hosted' }));
    assert.ok(seen.includes('alice.s3.test /vh/one.txt'), seen.join(', '));
    const got = await pathStyle.send(new GetObjectCommand({ Bucket: 'alice', Key: 'vh/one.txt' }));
    assert.equal(await got.Body!.transformToString(), 'hosted');
    await pathStyle.send(new PutObjectCommand({ Bucket: 'alice', Key: 'vh/two.txt', Body: 'path' }));
    const listed = await hosted.send(new ListObjectsV2Command({ Bucket: 'alice', Prefix: 'vh/' }));
    assert.deepEqual(listed.Contents?.map((c) => c.Key), ['vh/one.txt', 'vh/two.txt']);
    const back = await hosted.send(new GetObjectCommand({ Bucket: 'alice', Key: 'vh/two.txt' }));
    assert.equal(await back.Body!.transformToString(), 'path');
  });

  it('takes curl\'s SigV4 on a virtual-hosted URL, and refuses another user\'s bucket', async () => {
    const curl = (url: string) => run('/usr/bin/curl', ['-sS', '--resolve', `alice.s3.test:${port}:127.0.0.1`, '--resolve', `bob.s3.test:${port}:127.0.0.1`,
      '--aws-sigv4', 'aws:amz:us-east-1:s3', '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD', '--user', `${key.id}:${key.secret}`, '-w', '\n%{http_code}', url]);
    const got = await curl(`http://alice.s3.test:${port}/vh/one.txt`);
    assert.equal(got.stdout, 'hosted\n200', got.stderr);
    await server.deps.backend.addUser('bob');
    const refused = await curl(`http://bob.s3.test:${port}/`);
    assert.match(refused.stdout, /<Code>AccessDenied<\/Code>[\s\S]*\n403$/);
  });

  it('serves the buckets of s3.buckets under their collections\' access, and lists those the caller may read', async () => {
    const carolBearer = await server.bearer('carol');
    const now = new Date();
    for (const path of ['/lading/projects', '/lading/projects/shared', '/lading/projects/closed']) {
      await server.deps.catalog.createCollection({ path: parsePath(path), owner: 'carol', now });
    }
    await server.deps.catalog.setAccess(parsePath('/lading/projects/shared'), 'alice', 'read');
    const carolKey = await makeKey(server.url, carolBearer);
    const carol = new S3Client({ endpoint: server.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: carolKey.id, secretAccessKey: carolKey.secret } });
    try {
      await carol.send(new PutObjectCommand({ Bucket: 'shared-data', Key: 'runs/r1.csv', Body: 'a,b\n' }));
      const carolBuckets = await carol.send(new ListBucketsCommand({}));
      assert.deepEqual(carolBuckets.Buckets?.map((b) => b.Name), ['carol', 'closed', 'shared-data']);
    } finally {
      carol.destroy();
    }
    const mine = await pathStyle.send(new ListBucketsCommand({}));
    assert.deepEqual(mine.Buckets?.map((b) => b.Name), ['alice', 'shared-data'], 'closed is not readable to alice');
    const got = await hosted.send(new GetObjectCommand({ Bucket: 'shared-data', Key: 'runs/r1.csv' }));
    assert.equal(await got.Body!.transformToString(), 'a,b\n');
    const listed = await pathStyle.send(new ListObjectsV2Command({ Bucket: 'shared-data' }));
    assert.deepEqual(listed.Contents?.map((c) => c.Key), ['runs/r1.csv']);
    const write = await pathStyle.send(new PutObjectCommand({ Bucket: 'shared-data', Key: 'mine.txt', Body: 'x' })).catch((err: { name: string }) => err.name);
    assert.equal(write, 'AccessDenied', 'read access does not write');
    const closed = await pathStyle.send(new ListObjectsV2Command({ Bucket: 'closed' })).catch((err: { name: string }) => err.name);
    assert.equal(closed, 'AccessDenied');
  });
});
