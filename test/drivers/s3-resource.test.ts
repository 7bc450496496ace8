/**
 * The S3 resource against a real S3 server: OpenStack Swift with s3api, started and described
 * by `.ci/services/swift.sh` (env `LADING_TEST_S3_*`). Runs the resource contract under a key
 * prefix unique to each run and resource, plus what only S3 shows: multipart uploads that are
 * aborted leave no incomplete upload behind, objects of several parts round-trip, and memory
 * stays bounded while a large object streams up. Skips those when the variables are missing,
 * except under CI, where that fails; the checks of options at creation need no server.
 */
import { after, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { DeleteObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createS3Resource, signsPayload, type S3ResourceOptions } from '../../src/drivers/resource/s3.ts';
import type { Resource } from '../../src/core/ports.ts';
import { resourceContract, generated } from '../contracts/resource-contract.ts';
import { gc } from '../helpers/gc.ts';

const env = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT,
  accessKeyId: process.env.LADING_TEST_S3_ACCESS_KEY,
  secretAccessKey: process.env.LADING_TEST_S3_SECRET_KEY,
  region: process.env.LADING_TEST_S3_REGION,
  bucket: process.env.LADING_TEST_S3_BUCKET,
};
const missing = Object.entries(env).filter(([, v]) => !v).map(([k]) => k);
const MIB = 1024 * 1024;

describe('s3 resource options', () => {
  // NOTE: checked when the resource is created, so no S3 server is needed here.
  const base: S3ResourceOptions = {
    endpoint: 'http://127.0.0.1:1', bucket: 'bucket', region: 'us-east-1', accessKeyId: 'key-id', secretAccessKey: 's3cret-value',
  };

  it('refuses incomplete options when it is created', () => {
    assert.throws(() => createS3Resource({ ...base, bucket: '' }), /bucket/);
    assert.throws(() => createS3Resource({ ...base, secretAccessKey: '' }), /secretAccessKey/);
    assert.throws(() => createS3Resource({ ...base, endpoint: '' }), /endpoint/);
    assert.throws(() => createS3Resource({ ...base, accessKeyId: '' }), /accessKeyId/);
  });

  it('refuses an endpoint that is not an http(s) URL, and unusable prefixes, part and range sizes, never echoing a secret', () => {
    for (const endpoint of ['s3.example.org', 'ftp://s3.example.org', 'http://']) {
      assert.throws(() => createS3Resource({ ...base, endpoint }), (err: Error) => /`endpoint`/.test(err.message) && !err.message.includes(base.secretAccessKey));
    }
    assert.throws(() => createS3Resource({ ...base, prefix: '/lading/' }), /prefix/);
    assert.throws(() => createS3Resource({ ...base, partSize: MIB }), /partSize/);
    assert.throws(() => createS3Resource({ ...base, queueSize: 0 }), /queueSize/);
    assert.throws(() => createS3Resource({ ...base, readRangeSize: 64 * 1024 }), /readRangeSize/);
    assert.throws(() => createS3Resource({ ...base, payloadSigning: 'sometimes' as 'auto' }), /payloadSigning/);
  });

  it('hashes bodies into signatures over http and not over https by default; always and never as told', () => {
    assert.equal(signsPayload('http://s3.example.org'), true);
    assert.equal(signsPayload('https://s3.example.org'), false);
    assert.equal(signsPayload('https://s3.example.org', 'always'), true);
    assert.equal(signsPayload('http://s3.example.org', 'never'), false);
  });
});

if (missing.length > 0) {
  const message = `no S3 server for the tests (LADING_TEST_S3_* not set: ${missing.join(', ')}); run \`source .ci/services/swift.sh\` first.`;
  if (process.env.CI) test('S3 resource', () => assert.fail(message));
  else test('S3 resource', { skip: message }, () => {});
} else {
  const base = env as Required<typeof env> & Omit<S3ResourceOptions, 'prefix'>;
  const runPrefix = `test-${Date.now()}-${randomBytes(3).toString('hex')}/`;
  let n = 0;
  const fresh = (extra: Partial<S3ResourceOptions> = {}): Resource =>
    createS3Resource({ ...base, prefix: `${runPrefix}r${n++}/`, ...extra });
  const admin = new S3Client({
    endpoint: base.endpoint, region: base.region, forcePathStyle: true,
    credentials: { accessKeyId: base.accessKeyId, secretAccessKey: base.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  after(async () => {
    // NOTE: the store outlives the run; remove what the contract left under this run's prefix.
    let ContinuationToken: string | undefined;
    do {
      const page = await admin.send(new ListObjectsV2Command({ Bucket: base.bucket, Prefix: runPrefix, ContinuationToken }));
      for (const o of page.Contents ?? []) await admin.send(new DeleteObjectCommand({ Bucket: base.bucket, Key: o.Key }));
      ContinuationToken = page.NextContinuationToken;
    } while (ContinuationToken);
    admin.destroy();
  });
  const uploadsUnder = async (prefix: string): Promise<string[]> => {
    const res = await admin.send(new ListMultipartUploadsCommand({ Bucket: base.bucket, Prefix: prefix }));
    return (res.Uploads ?? []).map((u) => u.Key ?? '');
  };
  const sha256 = async (stream: Readable): Promise<string> => {
    const h = createHash('sha256');
    for await (const chunk of stream) h.update(chunk as Buffer);
    return h.digest('hex');
  };


  /**
   * A loopback HTTP proxy in front of the S3 server that records each request and lets
   * `intercept` answer (or break) one instead of forwarding it; resolves with its endpoint.
   * Requests are forwarded with their own Host header, which their signature covers.
   */
  const storeProxy = async (intercept: (req: IncomingMessage, res: ServerResponse, forward: () => void) => boolean = () => false) => {
    const seen: { method: string; url: string; range: string | undefined; payload: string | undefined }[] = [];
    const target = new URL(base.endpoint);
    const server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', range: req.headers.range, payload: req.headers['x-amz-content-sha256'] as string | undefined });
      const forward = (): void => {
        const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
      };
      if (!intercept(req, res, forward)) forward();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seen,
      close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    };
  };

  resourceContract('s3', async () => fresh());

  describe('s3 resource', () => {
    it('declares copy: a copy is CopyObject (UploadPartCopy past its limit), never bytes through lading', async () => {
      const r = fresh();
      try {
        assert.equal(r.capabilities.copy, true);
        assert.equal(typeof r.copy, 'function');
      } finally {
        await r.close();
      }
    });

    it('aborts the multipart upload of an aborted write: no incomplete upload remains', async () => {
      const prefix = `${runPrefix}abort/`;
      const r = createS3Resource({ ...base, prefix, partSize: 5 * MIB });
      try {
        // Two parts' worth at once, then the source stalls: the multipart upload exists and
        // has parts stored when the write is aborted.
        const source = new Readable({ read() {} });
        source.push(Buffer.alloc(11 * MIB, 3));
        const controller = new AbortController();
        const writing = r.write('key-abort001', source, { signal: controller.signal });
        const deadline = Date.now() + 15_000;
        while ((await uploadsUnder(prefix)).length === 0) {
          assert.ok(Date.now() < deadline, 'the multipart upload was started');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
        controller.abort();
        await assert.rejects(writing, { name: 'AbortError' });
        assert.deepEqual(await uploadsUnder(prefix), [], 'ListMultipartUploads shows nothing under the prefix');
        assert.equal(await r.size('key-abort001'), null);
      } finally {
        await r.close();
      }
    });

    it('sweeps multipart uploads left by a crashed writer, only when older than the cut-off', async () => {
      const prefix = `${runPrefix}sweep/`;
      const r = createS3Resource({ ...base, prefix });
      try {
        const { CreateMultipartUploadCommand } = await import('@aws-sdk/client-s3');
        await admin.send(new CreateMultipartUploadCommand({ Bucket: base.bucket, Key: `${prefix}key-crashed1` }));
        assert.equal(await r.sweepTemporaries(new Date(Date.now() - 3_600_000)), 0, 'a young upload is kept');
        assert.deepEqual(await uploadsUnder(prefix), [`${prefix}key-crashed1`]);
        assert.equal(await r.sweepTemporaries(new Date(Date.now() + 60_000)), 1);
        assert.deepEqual(await uploadsUnder(prefix), []);
      } finally {
        await r.close();
      }
    });

    it('copies an object larger than one CopyObject in parts, leaving no upload behind', async () => {
      const prefix = `${runPrefix}copyparts/`;
      const r = createS3Resource({ ...base, prefix, copyObjectMax: 5 * MIB, partSize: 5 * MIB });
      try {
        const total = 11 * MIB + 5;
        await r.write('key-copysrc1', generated(total, 4));
        assert.deepEqual(await r.copy!('key-copysrc1', 'key-copydst1'), { size: total });
        assert.equal(await sha256(await r.read('key-copydst1')), await sha256(generated(total, 4)));
        assert.deepEqual(await uploadsUnder(prefix), []);
      } finally {
        await r.close();
      }
    });

    it('round-trips an object of more than two parts, with ranges across part boundaries', async () => {
      const r = fresh({ partSize: 5 * MIB });
      try {
        const total = 3 * 5 * MIB + 12_345;
        assert.deepEqual(await r.write('key-parts001', generated(total, 9)), { size: total });
        assert.equal(await r.size('key-parts001'), total);
        assert.equal(await sha256(await r.read('key-parts001')), await sha256(generated(total, 9)));
        const whole = await buffer(generated(total, 9));
        const start = 5 * MIB - 100;
        const end = 10 * MIB + 100;
        assert.deepEqual(await buffer(await r.read('key-parts001', { start, end })), whole.subarray(start, end + 1));
      } finally {
        await r.close();
      }
    });

    it('reads an object of several parts over ranged GETs opened ahead, exact bytes and SHA-256 across part boundaries', async () => {
      const prefix = `${runPrefix}ranged/`;
      const total = 3 * 5 * MIB + 12_345;
      const writer = createS3Resource({ ...base, prefix, partSize: 5 * MIB });
      const proxy = await storeProxy();
      const r = createS3Resource({ ...base, endpoint: proxy.endpoint, prefix, partSize: 5 * MIB, queueSize: 3, readRangeSize: 5 * MIB });
      const wide = createS3Resource({ ...base, endpoint: proxy.endpoint, prefix, partSize: 5 * MIB });
      try {
        await writer.write('key-ranged01', generated(total, 5));
        assert.equal(await sha256(await r.read('key-ranged01')), await sha256(generated(total, 5)));
        const gets = proxy.seen.filter((q) => q.method === 'GET');
        assert.deepEqual(gets.map((q) => q.range).sort((a, b) => parseInt(a!.slice(6)) - parseInt(b!.slice(6))), [0, 1, 2, 3].map((i) => `bytes=${i * 5 * MIB}-${Math.min(total, (i + 1) * 5 * MIB) - 1}`));
        const whole = await buffer(generated(total, 5));
        const start = 5 * MIB - 100;
        const end = 15 * MIB + 10;
        assert.deepEqual(await buffer(await r.read('key-ranged01', { start, end })), whole.subarray(start, end + 1));
        // A range of at most one range's size is one GET, as is a small object.
        proxy.seen.length = 0;
        assert.deepEqual(await buffer(await r.read('key-ranged01', { start: 7, end: 5 * MIB + 6 })), whole.subarray(7, 5 * MIB + 7));
        assert.equal(proxy.seen.length, 1);
        // By default a GET asks for 64 MiB: this object of four parts is one GET.
        proxy.seen.length = 0;
        assert.equal(await sha256(await wide.read('key-ranged01')), await sha256(generated(total, 5)));
        assert.deepEqual(proxy.seen.filter((q) => q.method === 'GET').map((q) => q.range), [`bytes=0-${64 * MIB - 1}`]);
      } finally {
        await wide.close();
        await r.close();
        await writer.close();
        await proxy.close();
      }
    });

    it('signs the SHA-256 of each part it uploads over http, and sends UNSIGNED-PAYLOAD when told never to sign, which the store accepts', async () => {
      const total = 2 * 5 * MIB + 4_321;
      for (const payloadSigning of ['auto', 'never'] as const) {
        const proxy = await storeProxy();
        const r = createS3Resource({ ...base, endpoint: proxy.endpoint, prefix: `${runPrefix}signing-${payloadSigning}/`, partSize: 5 * MIB, payloadSigning });
        try {
          await r.write('key-signing1', generated(total, 9));
          await r.write('key-signing2', generated(10, 9));
          assert.equal(await sha256(await r.read('key-signing1')), await sha256(generated(total, 9)));
          assert.deepEqual(await buffer(await r.read('key-signing2')), await buffer(generated(10, 9)));
          const puts = proxy.seen.filter((q) => q.method === 'PUT');
          assert.equal(puts.length, 4, 'three parts and one small object');
          for (const q of puts) {
            if (payloadSigning === 'never') assert.equal(q.payload, 'UNSIGNED-PAYLOAD');
            else assert.match(q.payload ?? '', /^[0-9a-f]{64}$/);
          }
        } finally {
          await r.close();
          await proxy.close();
        }
      }
    });

    it('sends a GET opened ahead once more when the store drops it before its first byte, and fails a read cut short mid-part', async () => {
      const prefix = `${runPrefix}dropped/`;
      const total = 2 * 5 * MIB + 300_000;
      const writer = createS3Resource({ ...base, prefix, partSize: 5 * MIB });
      let cut: 'headers' | 'body' = 'headers';
      let dropped = 0;
      const proxy = await storeProxy((req, res) => {
        if (req.method !== 'GET' || req.headers.range !== `bytes=${10 * MIB}-${total - 1}`) return false;
        if (cut === 'headers' && dropped > 0) return false;
        dropped++;
        // NOTE: headers go out, then the connection breaks: before any byte, or after some.
        res.writeHead(206, { 'content-length': String(total - 10 * MIB), 'content-range': `bytes ${10 * MIB}-${total - 1}/${total}` });
        if (cut === 'headers') res.flushHeaders();
        else res.write(Buffer.alloc(1000));
        setTimeout(() => res.destroy(), 50);
        return true;
      });
      const r = createS3Resource({ ...base, endpoint: proxy.endpoint, prefix, partSize: 5 * MIB, queueSize: 3, readRangeSize: 5 * MIB });
      try {
        await writer.write('key-dropped1', generated(total, 6));
        assert.equal(await sha256(await r.read('key-dropped1')), await sha256(generated(total, 6)));
        assert.equal(dropped, 1);
        cut = 'body';
        await assert.rejects(sha256(await r.read('key-dropped1')), (err: { code?: string }) => err.code === 'UNAVAILABLE');
      } finally {
        await r.close();
        await writer.close();
        await proxy.close();
      }
    });

    it('leaves nothing when the store fails mid-upload: no object, no multipart upload, UNAVAILABLE', async () => {
      const prefix = `${runPrefix}midfail/`;
      const proxy = await storeProxy((req, res) => {
        if (req.method !== 'PUT' || !/[?&]partNumber=3(&|$)/.test(req.url ?? '')) return false;
        req.resume();
        res.writeHead(500, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>broken</Message></Error>');
        return true;
      });
      const r = createS3Resource({ ...base, endpoint: proxy.endpoint, prefix, partSize: 5 * MIB, queueSize: 2 });
      try {
        const source = generated(40 * MIB, 8);
        await assert.rejects(r.write('key-midfail1', source), (err: { code?: string }) => err.code === 'UNAVAILABLE');
        assert.ok(source.destroyed, 'the source is no longer read');
        assert.ok(proxy.seen.some((q) => /partNumber=2(&|$)/.test(q.url)), 'parts before the failing one were sent');
        assert.ok(!proxy.seen.some((q) => /partNumber=8(&|$)/.test(q.url)), 'the upload stopped at the failure');
        assert.deepEqual(await uploadsUnder(prefix), []);
        assert.equal(await r.size('key-midfail1'), null);
      } finally {
        await r.close();
        await proxy.close();
      }
    });

    it('keeps memory bounded while uploading 512 MiB generated on the fly and reading it back', async () => {
      const r = fresh();
      const total = 512 * MIB;
      try {
        globalThis.gc?.();
        const before = process.memoryUsage().rss;
        let peak = before;
        const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 20);
        try {
          assert.deepEqual(await r.write('key-big00001', generated(total, 3)), { size: total });
        } finally {
          clearInterval(sampler);
        }
        const growth = peak - before;
        // NOTE: 4 parts of 8 MiB in flight, plus the chunks being assembled into the next part
        // and parts not yet collected: about 120 MiB measured here, whether the object is
        // 256 MiB or 1 GiB. An upload that buffered the object would grow by all 512 MiB.
        assert.ok(growth < 192 * MIB, `RSS grew by ${Math.round(growth / MIB)} MiB while uploading ${total / MIB} MiB`);
        assert.equal(await r.size('key-big00001'), total);
        // Read back in ranged GETs of 64 MiB, up to 4 open at once: what waits is in the
        // sockets' buffers, so the buffers alive in lading stay far below one range (sampled
        // after a collection that also frees dead buffers before it returns: ~1 MiB measured
        // here, with ranges of 5 MiB as of 256).
        let liveBuffers = 0;
        const readSampler = setInterval(() => {
          gc({ type: 'major', flavor: 'last-resort' });
          liveBuffers = Math.max(liveBuffers, process.memoryUsage().arrayBuffers);
        }, 100);
        try {
          assert.equal(await sha256(await r.read('key-big00001')), await sha256(generated(total, 3)));
        } finally {
          clearInterval(readSampler);
        }
        assert.ok(liveBuffers < 8 * MIB, `${Math.round(liveBuffers / MIB)} MiB of buffers alive while reading ${total / MIB} MiB`);
        await r.delete('key-big00001');
        assert.equal(await r.size('key-big00001'), null);
      } finally {
        await r.close();
      }
    });

    it('reports an unreachable store as UNAVAILABLE naming S3', async () => {
      const r = createS3Resource({ ...base, endpoint: 'http://127.0.0.1:1' });
      try {
        await assert.rejects(r.size('key-00000001'), (err: { code?: string; message?: string }) =>
          err.code === 'UNAVAILABLE' && /S3/.test(err.message ?? ''));
      } finally {
        await r.close();
      }
    });
  });
}
