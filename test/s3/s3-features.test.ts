/**
 * The S3 front's addressing and object features beyond the basics, on one in-process node:
 * virtual-hosted-style requests below `s3.domain` (the AWS SDK for JavaScript addressing
 * `alice.s3.test`, resolved to the listener, and curl's own SigV4), path-style beside them;
 * buckets the operator binds to collections (`s3.buckets`), under those collections' access;
 * Content-Type and the other describing headers kept and sent back, CopyObject with REPLACE,
 * conditional PutObject, GetObject of one part (`partNumber`) and UploadPartCopy; a multipart
 * upload counting once toward `uploads.max_open`, whatever its parts; the S3 endpoint the
 * session tells the web app.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import type { LookupFunction } from 'node:net';
import {
  S3Client, AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListBucketsCommand,
  ListObjectsV2Command, PutObjectCommand, UploadPartCommand, UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { parsePath } from '../../src/core/path.ts';
import { loadConfig } from '../../src/wiring/config.ts';
import { s3EndpointFor } from '../../src/wiring/server.ts';
import { decodeParts, encodeParts, hostedBucket } from '../../src/s3/s3-front.ts';
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
      'uploads.max_open': 3,
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

  it('keeps Content-Type and the other describing headers of a PUT, and a later PUT replaces them', async () => {
    await pathStyle.send(new PutObjectCommand({
      Bucket: 'alice', Key: 'ct/page.html', Body: '<p>hi</p>', ContentType: 'text/html; charset=utf-8', CacheControl: 'max-age=60',
      ContentDisposition: 'attachment; filename="page.html"', ContentLanguage: 'en', Expires: new Date('2030-01-01T00:00:00Z'), Metadata: { site: 'a' },
    }));
    const head = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'ct/page.html' }));
    assert.equal(head.ContentType, 'text/html; charset=utf-8');
    assert.equal(head.CacheControl, 'max-age=60');
    assert.equal(head.ContentDisposition, 'attachment; filename="page.html"');
    assert.equal(head.ContentLanguage, 'en');
    assert.equal(head.Expires?.toISOString(), '2030-01-01T00:00:00.000Z');
    assert.deepEqual(head.Metadata, { site: 'a' }, 'describing headers are not user metadata');
    const got = await pathStyle.send(new GetObjectCommand({ Bucket: 'alice', Key: 'ct/page.html', ResponseContentType: 'text/plain' }));
    assert.equal(got.ContentType, 'text/plain', 'response-content-type wins');
    await got.Body!.transformToString();
    await pathStyle.send(new PutObjectCommand({ Bucket: 'alice', Key: 'ct/page.html', Body: 'plain', ContentType: 'text/plain' }));
    const again = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'ct/page.html' }));
    assert.equal(again.ContentType, 'text/plain');
    assert.equal(again.CacheControl, undefined, 'the overwrite set no Cache-Control');
  });

  it('copies with the metadata (COPY) or with the request\'s (REPLACE), onto itself too', async () => {
    await pathStyle.send(new PutObjectCommand({ Bucket: 'alice', Key: 'cp/src.csv', Body: 'a,b', ContentType: 'text/csv', Metadata: { origin: 'lab' } }));
    await pathStyle.send(new CopyObjectCommand({ Bucket: 'alice', Key: 'cp/kept.csv', CopySource: 'alice/cp/src.csv' }));
    const kept = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'cp/kept.csv' }));
    assert.equal(kept.ContentType, 'text/csv');
    assert.deepEqual(kept.Metadata, { origin: 'lab' });
    await pathStyle.send(new CopyObjectCommand({
      Bucket: 'alice', Key: 'cp/new.csv', CopySource: 'alice/cp/src.csv', MetadataDirective: 'REPLACE', ContentType: 'application/x-csv', Metadata: { origin: 'copy' },
    }));
    const replaced = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'cp/new.csv' }));
    assert.equal(replaced.ContentType, 'application/x-csv');
    assert.deepEqual(replaced.Metadata, { origin: 'copy' });
    const refused = await pathStyle.send(new CopyObjectCommand({ Bucket: 'alice', Key: 'cp/src.csv', CopySource: 'alice/cp/src.csv' })).catch((err: { name: string }) => err.name);
    assert.equal(refused, 'InvalidRequest', 'a copy onto itself must change the metadata');
    await pathStyle.send(new CopyObjectCommand({ Bucket: 'alice', Key: 'cp/src.csv', CopySource: 'alice/cp/src.csv', MetadataDirective: 'REPLACE', Metadata: { state: 'checked' } }));
    const self = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'cp/src.csv' }));
    assert.deepEqual(self.Metadata, { state: 'checked' });
    assert.equal(self.ContentType, 'binary/octet-stream', 'REPLACE without a Content-Type drops the old one');
    const condition = await pathStyle.send(new CopyObjectCommand({ Bucket: 'alice', Key: 'cp/other.csv', CopySource: 'alice/cp/src.csv', CopySourceIfMatch: '"0123"' })).catch((err: { name: string }) => err.name);
    assert.equal(condition, 'PreconditionFailed');
  });

  it('writes conditionally: If-None-Match: * only a new key, If-Match only the object it names', async () => {
    const put = (body: string, headers: Record<string, string>) => {
      const command = new PutObjectCommand({ Bucket: 'alice', Key: 'cond/x.txt', Body: body });
      command.middlewareStack.add((next) => async (args) => {
        Object.assign((args.request as { headers: Record<string, string> }).headers, headers);
        return next(args);
      }, { step: 'build', name: 'conditions' });
      return pathStyle.send(command).then((r) => r.ETag!, (err: { name: string; $metadata: { httpStatusCode: number } }) => `${err.$metadata.httpStatusCode} ${err.name}`);
    };
    assert.equal(await put('one', { 'if-match': '*' }), '404 NoSuchKey');
    const first = await put('one', { 'if-none-match': '*' });
    assert.match(first, /^"[0-9a-f]{32}"$/);
    assert.equal(await put('two', { 'if-none-match': '*' }), '412 PreconditionFailed');
    assert.equal(await put('two', { 'if-none-match': first }), '412 PreconditionFailed');
    assert.equal(await put('two', { 'if-match': '"00000000000000000000000000000000"' }), '412 PreconditionFailed');
    const second = await put('two', { 'if-match': first });
    assert.match(second, /^"[0-9a-f]{32}"$/);
    const got = await pathStyle.send(new GetObjectCommand({ Bucket: 'alice', Key: 'cond/x.txt' }));
    assert.equal(await got.Body!.transformToString(), 'two');
  });

  it('keeps a multipart upload\'s Content-Type, reads one part by number, and copies parts from ranges of an object', async () => {
    const data = randomBytes(11 * 1024 * 1024);
    const sizes = [5 * 1024 * 1024, 5 * 1024 * 1024, 1024 * 1024];
    const { UploadId } = await pathStyle.send(new CreateMultipartUploadCommand({ Bucket: 'alice', Key: 'mp/data.bin', ContentType: 'application/x-data' }));
    const parts = [];
    let at = 0;
    for (const [i, size] of sizes.entries()) {
      const r = await pathStyle.send(new UploadPartCommand({ Bucket: 'alice', Key: 'mp/data.bin', UploadId, PartNumber: i + 1, Body: data.subarray(at, at + size) }));
      parts.push({ ETag: r.ETag!, PartNumber: i + 1 });
      at += size;
    }
    await pathStyle.send(new CompleteMultipartUploadCommand({ Bucket: 'alice', Key: 'mp/data.bin', UploadId, MultipartUpload: { Parts: parts } }));
    const head = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'mp/data.bin' }));
    assert.equal(head.ContentType, 'application/x-data');
    const second = await pathStyle.send(new GetObjectCommand({ Bucket: 'alice', Key: 'mp/data.bin', PartNumber: 2 }));
    assert.equal(second.PartsCount, 3);
    assert.equal(second.ContentRange, `bytes ${sizes[0]}-${sizes[0]! + sizes[1]! - 1}/${data.length}`);
    assert.ok(Buffer.from(await second.Body!.transformToByteArray()).equals(data.subarray(sizes[0]!, sizes[0]! + sizes[1]!)));
    const beyond = await pathStyle.send(new HeadObjectCommand({ Bucket: 'alice', Key: 'mp/data.bin', PartNumber: 4 })).catch((err: { $metadata: { httpStatusCode: number } }) => err.$metadata.httpStatusCode);
    assert.equal(beyond, 416);

    const copy = await pathStyle.send(new CreateMultipartUploadCommand({ Bucket: 'alice', Key: 'mp/copy.bin' }));
    const ranges = [[0, 5 * 1024 * 1024 - 1], [5 * 1024 * 1024, data.length - 1]] as const;
    const copied = [];
    for (const [i, [start, end]] of ranges.entries()) {
      const r = await pathStyle.send(new UploadPartCopyCommand({
        Bucket: 'alice', Key: 'mp/copy.bin', UploadId: copy.UploadId, PartNumber: i + 1, CopySource: 'alice/mp/data.bin', CopySourceRange: `bytes=${start}-${end}`,
      }));
      assert.equal(r.CopyPartResult?.ETag, `"${createHash('md5').update(data.subarray(start, end + 1)).digest('hex')}"`);
      copied.push({ ETag: r.CopyPartResult!.ETag!, PartNumber: i + 1 });
    }
    await pathStyle.send(new CompleteMultipartUploadCommand({ Bucket: 'alice', Key: 'mp/copy.bin', UploadId: copy.UploadId, MultipartUpload: { Parts: copied } }));
    const whole = await pathStyle.send(new GetObjectCommand({ Bucket: 'alice', Key: 'mp/copy.bin' }));
    assert.ok(Buffer.from(await whole.Body!.transformToByteArray()).equals(data));
  });

  it('records part sizes as runs and reads them back', () => {
    assert.equal(encodeParts([5, 5, 5, 2]), '5*3,2');
    assert.deepEqual(decodeParts('5*3,2'), [5, 5, 5, 2]);
    assert.equal(decodeParts('5*x'), null);
  });

  it('counts a multipart upload once toward uploads.max_open (3 here), with resumable uploads, whatever its parts', async () => {
    const first = await pathStyle.send(new CreateMultipartUploadCommand({ Bucket: 'alice', Key: 'open/one.bin' }));
    for (let n = 1; n <= 5; n++) {
      await pathStyle.send(new UploadPartCommand({ Bucket: 'alice', Key: 'open/one.bin', UploadId: first.UploadId, PartNumber: n, Body: `part ${n}` }));
    }
    const tus = await fetch(`${server.url}/api/uploads`, {
      method: 'POST', headers: { authorization: bearer, 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': `path ${Buffer.from('/lading/home/alice/open/tus.txt').toString('base64')}` },
    });
    assert.equal(tus.status, 201, 'five parts of one upload leave room for a resumable upload');
    const second = await pathStyle.send(new CreateMultipartUploadCommand({ Bucket: 'alice', Key: 'open/two.bin' }));
    const refused = await pathStyle.send(new CreateMultipartUploadCommand({ Bucket: 'alice', Key: 'open/three.bin' }))
      .catch((err: { name: string; $metadata: { httpStatusCode: number } }) => `${err.$metadata.httpStatusCode} ${err.name}`);
    assert.equal(refused, '503 SlowDown', 'the fourth unfinished upload');
    const tusAgain = await fetch(`${server.url}/api/uploads`, {
      method: 'POST', headers: { authorization: bearer, 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': `path ${Buffer.from('/lading/home/alice/open/tus2.txt').toString('base64')}` },
    });
    assert.equal(tusAgain.status, 429);
    await pathStyle.send(new AbortMultipartUploadCommand({ Bucket: 'alice', Key: 'open/one.bin', UploadId: first.UploadId }));
    await pathStyle.send(new AbortMultipartUploadCommand({ Bucket: 'alice', Key: 'open/two.bin', UploadId: second.UploadId }));
    await fetch(new URL(tus.headers.get('location')!, server.url), { method: 'DELETE', headers: { authorization: bearer, 'tus-resumable': '1.0.0' } });
  });

  it('tells the web app the S3 endpoint in the session, and null where no S3 listener runs', async () => {
    const session = async (url: string, auth: string) => ((await (await fetch(`${url}/auth/session`, { headers: { authorization: auth } })).json()) as { Response: { data: { s3_endpoint: string | null } } }).Response.data.s3_endpoint;
    assert.equal(await session(server.url, bearer), server.s3Url, 'the host the request used, on the S3 listener\'s port');
    const plain = await startTestServer({ zone: 'lading' });
    try {
      assert.equal(await session(plain.url, await plain.bearer('alice')), null);
    } finally {
      await plain.stop();
    }
    const config = loadConfig({ env: { LADING_S3_LISTEN: '0.0.0.0:9000', LADING_S3_PUBLIC_URL: 'https://s3.example.org/' } });
    assert.equal(s3EndpointFor(config, 'http://ignored:8080', 9000), 'https://s3.example.org');
  });

  it('answers a completion of an upload that does not exist NoSuchUpload, whatever ETags it names', async () => {
    const answer = await pathStyle.send(new CompleteMultipartUploadCommand({
      Bucket: 'alice', Key: 'nothing.bin', UploadId: 'abc1234def', MultipartUpload: { Parts: [{ ETag: '1234', PartNumber: 1 }] },
    })).catch((err: { name: string; $metadata: { httpStatusCode: number } }) => `${err.$metadata.httpStatusCode} ${err.name}`);
    assert.equal(answer, '404 NoSuchUpload');
  });
});
