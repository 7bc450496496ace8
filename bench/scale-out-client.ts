/**
 * Client side of `bench/scale-out.sh` (not a test): an upload load generator with bounded
 * concurrency, and one large transfer either through lading or directly against the S3 store
 * with the same part size and queue as lading's S3 driver. Prints one JSON line per run.
 * Talks only to the URLs it is given (loopback in the benchmark); takes the bearer token and
 * S3 secret from the environment, never from argv.
 *
 *   uploads <url-of-a-collection> <seconds> <concurrency> <bytes>   (env BENCH_TOKEN)
 *   lading-big <url-of-an-object> <file>                            (env BENCH_TOKEN)
 *   s3-big <key> <file>                                             (env LADING_TEST_S3_*)
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { DEFAULT_PART_SIZE, DEFAULT_QUEUE_SIZE } from '../src/drivers/resource/s3.ts';
import { testStore } from './s3-test-store.ts';

const [mode, ...args] = process.argv.slice(2);
const token = process.env.BENCH_TOKEN ?? '';

/** A sink that counts bytes, so downloads cost no disk writes. */
function sink(): Writable & { bytes: number } {
  const w = new Writable({ write(chunk: Buffer, _enc, cb) { w.bytes += chunk.length; cb(); } }) as Writable & { bytes: number };
  w.bytes = 0;
  return w;
}

function put(url: string, body: Buffer | (() => NodeJS.ReadableStream), length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': length },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else body().pipe(req);
  });
}

async function uploads(base: string, seconds: number, concurrency: number, bytes: number): Promise<void> {
  const body = randomBytes(bytes);
  const deadline = performance.now() + seconds * 1000;
  const run = randomBytes(4).toString('hex');
  let next = 0;
  let ok = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const status = await put(`${base}/u-${run}-${next++}.bin`, body, bytes).catch(() => 0);
      if (status === 200) ok++;
      else failed++;
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ uploads: ok, failed, seconds: +elapsed.toFixed(2), perSecond: +(ok / elapsed).toFixed(1) }));
}

/** Milliseconds of this process's CPU (user + system) since `from`. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return Math.round((d.user + d.system) / 1000);
}

async function ladingBig(url: string, file: string): Promise<void> {
  const { size } = await stat(file);
  let t = performance.now();
  let cpu = process.cpuUsage();
  const status = await put(`${url}?force=true`, () => createReadStream(file, { highWaterMark: 1024 * 1024 }), size);
  if (status !== 200) throw new Error(`upload answered ${status}`);
  const up = (performance.now() - t) / 1000;
  const upCpu = cpuMs(cpu);
  t = performance.now();
  cpu = process.cpuUsage();
  // NOTE: node:http, as the SDK's GetObject of the direct path reads with: the two downloads
  // differ only in where the bytes come from, not in the client's HTTP stack (fetch's web
  // streams cost more CPU per chunk than an IncomingMessage).
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    httpRequest(`${url}?download=true`, { headers: { authorization: `Bearer ${token}` } }, resolve).on('error', reject).end();
  });
  if (res.statusCode !== 200) throw new Error(`download answered ${res.statusCode}`);
  const out = sink();
  await pipeline(res, out);
  if (out.bytes !== size) throw new Error(`downloaded ${out.bytes} of ${size} bytes`);
  console.log(JSON.stringify({ upload: +up.toFixed(2), download: +((performance.now() - t) / 1000).toFixed(2), bytes: size, uploadCpuMs: upCpu, downloadCpuMs: cpuMs(cpu) }));
}

async function s3Big(key: string, file: string): Promise<void> {
  const { client, Bucket } = testStore();
  const { size } = await stat(file);
  try {
    let t = performance.now();
    let cpu = process.cpuUsage();
    await new Upload({
      client, params: { Bucket, Key: key, Body: createReadStream(file, { highWaterMark: 1024 * 1024 }) },
      partSize: DEFAULT_PART_SIZE, queueSize: DEFAULT_QUEUE_SIZE, leavePartsOnError: false,
    }).done();
    const up = (performance.now() - t) / 1000;
    const upCpu = cpuMs(cpu);
    t = performance.now();
    cpu = process.cpuUsage();
    const got = await client.send(new GetObjectCommand({ Bucket, Key: key }));
    const out = sink();
    await pipeline(got.Body as NodeJS.ReadableStream, out);
    if (out.bytes !== size) throw new Error(`downloaded ${out.bytes} of ${size} bytes`);
    console.log(JSON.stringify({ upload: +up.toFixed(2), download: +((performance.now() - t) / 1000).toFixed(2), bytes: size, uploadCpuMs: upCpu, downloadCpuMs: cpuMs(cpu) }));
  } finally {
    await client.send(new DeleteObjectCommand({ Bucket, Key: key })).catch(() => {});
    client.destroy();
  }
}

if (mode === 'uploads') await uploads(args[0]!, Number(args[1]), Number(args[2]), Number(args[3]));
else if (mode === 'lading-big') await ladingBig(args[0]!, args[1]!);
else if (mode === 's3-big') await s3Big(args[0]!, args[1]!);
else {
  console.error('usage: scale-out-client.ts uploads|lading-big|s3-big …');
  process.exit(2);
}
