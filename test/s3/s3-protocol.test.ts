/**
 * The S3 front's protocol edges, on one in-process node: AWS's published SigV4 test vectors
 * (a header-signed GET and the chunk signatures of a `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`
 * upload), a chunked upload over HTTP whose tampered chunk stores nothing, the AWS SDK for
 * JavaScript's checksum trailers (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`), clock skew and
 * presigned expiry, a disabled user's key, the bounded entity-free XML parser, the S3 keys
 * API and `lading s3 key create`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3Client, PutObjectCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ChunkedDecoder, parseSignature, signingKey, verifySignature } from '../../src/s3/sigv4.ts';
import { parseXml } from '../../src/s3/xml.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeKey } from './s3-clients-suite.ts';
import { runLading } from '../cli/run-lading.ts';

const EXAMPLE_SECRET = Buffer.from('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');

describe('SigV4 (AWS\'s published examples)', () => {
  it('verifies the example GET with a Range header and refuses it with another secret', () => {
    const headers = {
      host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9',
      'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'x-amz-date': '20130524T000000Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    };
    const claim = parseSignature(headers, new URLSearchParams())!;
    assert.equal(claim.keyId, 'AKIAIOSFODNN7EXAMPLE');
    verifySignature(claim, EXAMPLE_SECRET, { method: 'GET', rawPath: '/test.txt', rawQuery: '', headers });
    assert.throws(() => verifySignature(claim, Buffer.from('another secret'), { method: 'GET', rawPath: '/test.txt', rawQuery: '', headers }), { code: 'SignatureDoesNotMatch' });
    assert.throws(() => verifySignature(claim, EXAMPLE_SECRET, { method: 'GET', rawPath: '/test2.txt', rawQuery: '', headers }), { code: 'SignatureDoesNotMatch' });
  });

  it('verifies the example presigned GET', () => {
    const query = 'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404';
    const headers = { host: 'examplebucket.s3.amazonaws.com' };
    const claim = parseSignature(headers, new URLSearchParams(query))!;
    assert.equal(claim.presigned, true);
    verifySignature(claim, EXAMPLE_SECRET, { method: 'GET', rawPath: '/test.txt', rawQuery: query, headers });
  });

  it('decodes the example chunked upload, checking each chunk\'s signature, and fails a tampered chunk', async () => {
    const key = signingKey(EXAMPLE_SECRET, '20130524', 'us-east-1');
    const seed = '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9';
    const body = Buffer.concat([
      Buffer.from('10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n'), Buffer.alloc(65536, 'a'), Buffer.from('\r\n'),
      Buffer.from('400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n'), Buffer.alloc(1024, 'a'), Buffer.from('\r\n'),
      Buffer.from('0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n'),
    ]);
    const decode = async (bytes: Buffer, pieces: number) => {
      const decoder = new ChunkedDecoder({ signing: { key, seed, amzDate: '20130524T000000Z', scope: '20130524/us-east-1/s3/aws4_request' }, decodedLength: 66560 });
      const step = Math.ceil(bytes.length / pieces);
      const out: Buffer[] = [];
      for await (const chunk of Readable.from(Array.from({ length: pieces }, (_, i) => bytes.subarray(i * step, (i + 1) * step))).pipe(decoder)) out.push(chunk as Buffer);
      return Buffer.concat(out);
    };
    assert.ok((await decode(body, 1)).equals(Buffer.alloc(66560, 'a')));
    assert.ok((await decode(body, 97)).equals(Buffer.alloc(66560, 'a')), 'chunk headers split across reads');
    const tampered = Buffer.from(body);
    tampered[200] = 'b'.charCodeAt(0);
    await assert.rejects(decode(tampered, 3), { code: 'SignatureDoesNotMatch' });
    await assert.rejects(decode(body.subarray(0, 60000), 2), { code: 'IncompleteBody' });
  });

  it('parses the two documents clients send and refuses declarations, entities and depth', () => {
    const doc = parseXml('<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a &amp; b&#x2F;c</Key></Object><Quiet>true</Quiet></Delete>');
    assert.equal(doc.name, 'Delete');
    assert.equal(doc.children[0]!.children[0]!.text, 'a & b/c');
    for (const bad of [
      '<!DOCTYPE d [<!ENTITY x "y">]><Delete>&x;</Delete>', '<Delete>&x;</Delete>', '<Delete><![CDATA[x]]></Delete>', '<Delete><Object></Delete>',
      '<Delete/><Other/>', `${'<a>'.repeat(40)}${'</a>'.repeat(40)}`, '<Delete>&#0;</Delete>',
    ]) assert.throws(() => parseXml(bad), { code: 'MalformedXML' }, bad);
  });
});

describe('the S3 listener', () => {
  let server: TestServer;
  let bearer: string;
  let key: { id: string; secret: string };
  let s3: S3Client;

  before(async () => {
    server = await startTestServer({ 's3.listen': '127.0.0.1:0', zone: 'lading' });
    bearer = await server.bearer('alice');
    key = await makeKey(server.url, bearer, 'protocol');
    s3 = new S3Client({ endpoint: server.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: key.id, secretAccessKey: key.secret } });
  });
  after(async () => {
    s3?.destroy();
    await server?.stop();
  });

  /** A signed request of our own (header auth), for what no client sends on purpose. */
  function signed(method: string, path: string, options: { body?: Buffer | string; headers?: Record<string, string>; amzDate?: string; payload?: string; secret?: string } = {}) {
    const amzDate = options.amzDate ?? new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    const date = amzDate.slice(0, 8);
    const host = new URL(server.s3Url!).host;
    const payload = options.payload ?? createHash('sha256').update(options.body ?? '').digest('hex');
    const headers: Record<string, string> = { host, 'x-amz-date': amzDate, 'x-amz-content-sha256': payload, ...options.headers };
    const names = Object.keys(headers).map((n) => n.toLowerCase()).sort();
    const canonical = [method, path, '', names.map((n) => `${n}:${headers[n]}\n`).join(''), names.join(';'), payload].join('\n');
    const scope = `${date}/us-east-1/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
    const signingK = signingKey(Buffer.from(options.secret ?? key.secret), date, 'us-east-1');
    const signature = createHmac('sha256', signingK).update(toSign).digest('hex');
    const { host: _host, ...sent } = headers;
    return { signature, signingK, amzDate, scope, init: { method, headers: { ...sent, authorization: `AWS4-HMAC-SHA256 Credential=${key.id}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` } } };
  }

  it('takes a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload and stores nothing when a chunk\'s signature is wrong', async () => {
    const data = Buffer.alloc(70_000, 'z');
    const chunks = [data.subarray(0, 65536), data.subarray(65536), Buffer.alloc(0)];
    const make = (tamper: boolean) => {
      const s = signed('PUT', '/alice/chunked.bin', { payload: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', headers: { 'x-amz-decoded-content-length': String(data.length), 'content-encoding': 'aws-chunked' } });
      let previous = s.signature;
      const parts: Buffer[] = [];
      for (const chunk of chunks) {
        const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', s.amzDate, s.scope, previous, createHash('sha256').update('').digest('hex'), createHash('sha256').update(chunk).digest('hex')].join('\n');
        const sig = createHmac('sha256', s.signingK).update(toSign).digest('hex');
        previous = sig;
        const sent = tamper && chunk.length > 0 && chunk.length < 65536 ? Buffer.alloc(chunk.length, 'y') : chunk;
        parts.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${sig}\r\n`), sent, Buffer.from('\r\n'));
      }
      return { ...s.init, body: Buffer.concat(parts) };
    };
    const refused = await fetch(`${server.s3Url}/alice/chunked.bin`, make(true));
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /<Code>SignatureDoesNotMatch<\/Code>/);
    const missing = await s3.send(new GetObjectCommand({ Bucket: 'alice', Key: 'chunked.bin' })).catch((err: { name: string }) => err.name);
    assert.equal(missing, 'NoSuchKey', 'nothing was stored');
    const stored = await fetch(`${server.s3Url}/alice/chunked.bin`, make(false));
    assert.equal(stored.status, 200, await stored.text());
    const got = await s3.send(new GetObjectCommand({ Bucket: 'alice', Key: 'chunked.bin' }));
    assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(data));
    assert.equal(got.ETag, `"${createHash('md5').update(data).digest('hex')}"`);
  });

  it('takes the AWS SDK for JavaScript\'s uploads with checksum trailers, and lists with it', async () => {
    const body = Buffer.from('sdk body '.repeat(5000));
    const put = await s3.send(new PutObjectCommand({ Bucket: 'alice', Key: 'sdk/one.txt', Body: Readable.from([body]), ContentLength: body.length, Metadata: { source: 'js' } }));
    assert.equal(put.ETag, `"${createHash('md5').update(body).digest('hex')}"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'alice', Key: 'sdk/one.txt' }));
    assert.equal(await got.Body!.transformToString(), body.toString());
    assert.equal(got.Metadata?.source, 'js');
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'alice', Prefix: 'sdk/' }));
    assert.deepEqual(listed.Contents?.map((c) => c.Key), ['sdk/one.txt']);
  });

  it('refuses a payload whose SHA-256 is not the signed one, and stores nothing', async () => {
    const s = signed('PUT', '/alice/hash.txt', { body: 'the signed body' });
    const res = await fetch(`${server.s3Url}/alice/hash.txt`, { ...s.init, body: 'another body!!!' });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /XAmzContentSHA256Mismatch/);
    const head = await fetch(`${server.s3Url}/alice/hash.txt`, signed('HEAD', '/alice/hash.txt').init);
    assert.equal(head.status, 404);
  });

  it('refuses a clock more than 15 minutes off, a wrong secret, an unknown key and no signature, with S3\'s codes', async () => {
    const skewed = new Date(Date.now() - 16 * 60_000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    const cases: [RequestInit, number, string][] = [
      [signed('GET', '/alice', { amzDate: skewed }).init, 403, 'RequestTimeTooSkewed'],
      [signed('GET', '/alice', { secret: 'not the secret' }).init, 403, 'SignatureDoesNotMatch'],
      [{ headers: {} }, 403, 'AccessDenied'],
    ];
    const near = new Date(Date.now() - 14 * 60_000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    assert.equal((await fetch(`${server.s3Url}/alice`, signed('GET', '/alice', { amzDate: near }).init)).status, 200, '14 minutes is within the bound');
    for (const [init, status, code] of cases) {
      const res = await fetch(`${server.s3Url}/alice`, init);
      assert.equal(res.status, status, code);
      assert.match(await res.text(), new RegExp(`<Code>${code}</Code>`));
    }
    const unknown = signed('GET', '/alice');
    const res = await fetch(`${server.s3Url}/alice`, { headers: { ...unknown.init.headers, authorization: unknown.init.headers.authorization.replace(key.id, 'LKAAAAAAAAAAAAAAAAAA') } });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /InvalidAccessKeyId/);
  });

  it('refuses an expired presigned URL', async () => {
    const amzDate = new Date(Date.now() - 120_000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    const date = amzDate.slice(0, 8);
    const host = new URL(server.s3Url!).host;
    const scope = `${date}/us-east-1/s3/aws4_request`;
    const query = `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${encodeURIComponent(`${key.id}/${scope}`)}&X-Amz-Date=${amzDate}&X-Amz-Expires=60&X-Amz-SignedHeaders=host`;
    const canonical = ['GET', '/alice', query, `host:${host}\n`, 'host', 'UNSIGNED-PAYLOAD'].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
    const sig = createHmac('sha256', signingKey(Buffer.from(key.secret), date, 'us-east-1')).update(toSign).digest('hex');
    const res = await fetch(`${server.s3Url}/alice?${query}&X-Amz-Signature=${sig}`);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Request has expired/);
  });

  it('refuses the keys of a disabled user at the next request, and lists and revokes keys through the API', async () => {
    await server.addUser('bob');
    const bobBearer = `Bearer ${await server.login('bob')}`;
    const bobKey = await makeKey(server.url, bobBearer);
    const bob = new S3Client({ endpoint: server.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: bobKey.id, secretAccessKey: bobKey.secret } });
    try {
      await bob.send(new ListObjectsV2Command({ Bucket: 'bob' }));
      const listed = await (await fetch(`${server.url}/api/s3/keys`, { headers: { authorization: bobBearer } })).json() as { Response: { data: Record<string, unknown>[] } };
      assert.deepEqual(listed.Response.data.map((k) => k.access_key_id), [bobKey.id]);
      assert.ok(!JSON.stringify(listed).includes(bobKey.secret), 'the secret is never listed');
      const denied = await bob.send(new ListObjectsV2Command({ Bucket: 'alice' })).catch((err: { name: string }) => err.name);
      assert.equal(denied, 'AccessDenied', 'another user\'s bucket is refused');
      await server.deps.admin.setDisabled('bob', true);
      const refused = await bob.send(new ListObjectsV2Command({ Bucket: 'bob' })).catch((err: { name: string }) => err.name);
      assert.equal(refused, 'InvalidAccessKeyId');
      const notMine = await fetch(`${server.url}/api/s3/keys/${bobKey.id}`, { method: 'DELETE', headers: { authorization: bearer } });
      assert.equal(notMine.status, 404, 'alice cannot revoke bob\'s key');
    } finally {
      bob.destroy();
    }
  });

  it('lading s3 key create prints the two export lines, and list and revoke work', async () => {
    const env = { LADING_URL: server.url, LADING_TOKEN: bearer.slice('Bearer '.length), XDG_CONFIG_HOME: server.dataDir };
    const made = await runLading(['s3', 'key', 'create', '--label', 'cli'], { env });
    assert.equal(made.code, 0, made.stderr);
    const m = /^export AWS_ACCESS_KEY_ID=(LK[A-Z2-7]{18})\nexport AWS_SECRET_ACCESS_KEY=([A-Za-z0-9_-]{40})\n$/.exec(made.stdout);
    assert.ok(m, made.stdout);
    const cli = new S3Client({ endpoint: server.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: m[1]!, secretAccessKey: m[2]! } });
    try {
      await cli.send(new ListObjectsV2Command({ Bucket: 'alice' }));
      const list = await runLading(['s3', 'key', 'list'], { env });
      assert.match(list.stdout, new RegExp(`^${m[1]}\\t.*\\tcli$`, 'm'));
      assert.ok(!list.stdout.includes(m[2]!));
      const revoked = await runLading(['s3', 'key', 'revoke', m[1]!], { env });
      assert.equal(revoked.code, 0, revoked.stderr);
      const refused = await cli.send(new ListObjectsV2Command({ Bucket: 'alice' })).catch((err: { name: string }) => err.name);
      assert.equal(refused, 'InvalidAccessKeyId');
    } finally {
      cli.destroy();
    }
  });
});
