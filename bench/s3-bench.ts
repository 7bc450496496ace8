/**
 * One S3 server's figures for bench/s3.sh, measured with the same client (the AWS SDK for
 * JavaScript) against lading's S3 listener and the Swift S3 server: small PutObject per second
 * (CONCURRENCY in flight), 10 MiB and LARGE_MIB up and down (MB/s; the large one goes in 16 MiB
 * parts), and one ListObjectsV2 walk of 10,000 keys (seconds). Reads S3_ENDPOINT, S3_BUCKET,
 * S3_PREFIX, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY from the environment (secrets never in
 * argv); prints one JSON object.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`s3-bench: ${name} is not set`);
  return v;
};
const bucket = env('S3_BUCKET');
const prefix = env('S3_PREFIX');
const work = env('WORK');
const duration = Number(process.env.DURATION ?? 5) * 1000;
const concurrency = Number(process.env.CONCURRENCY ?? 8);
const largeMib = Number(process.env.LARGE_MIB ?? 1024);
const s3 = new S3Client({
  endpoint: env('S3_ENDPOINT'), region: process.env.S3_REGION ?? 'us-east-1', forcePathStyle: true,
  credentials: { accessKeyId: env('AWS_ACCESS_KEY_ID'), secretAccessKey: env('AWS_SECRET_ACCESS_KEY') },
  requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
});

async function smallPuts(): Promise<number> {
  let done = 0;
  let n = 0;
  const end = Date.now() + duration;
  const body = Buffer.from('x'.repeat(15));
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}small/${n++}`, Body: body }));
      done++;
    }
  }));
  return done / (duration / 1000);
}

async function up(file: string, key: string, bytes: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  await new Upload({ client: s3, params: { Bucket: bucket, Key: key, Body: createReadStream(file), ContentLength: bytes }, partSize: 16 * 1024 * 1024, queueSize: 4 }).done();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function down(key: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  await pipeline(got.Body as Readable, createWriteStream('/dev/null'));
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function list10k(): Promise<number> {
  const keys = Array.from({ length: 10_000 }, (_, i) => `${prefix}list/k${String(i).padStart(5, '0')}`);
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < keys.length) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: keys[next++], Body: 'k' }));
  }));
  const t0 = process.hrtime.bigint();
  let token: string | undefined;
  let count = 0;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}list/`, ContinuationToken: token }));
    count += page.KeyCount ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  if (count !== 10_000) throw new Error(`s3-bench: listed ${count} keys, not 10000`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const out: Record<string, number> = {};
out.small = await smallPuts();
for (const [name, mib] of [['10m', 10], ['large', largeMib]] as const) {
  const file = `${work}/s3-${name}.bin`;
  const bytes = mib * 1024 * 1024;
  await writeFile(file, randomBytes(Math.min(bytes, 64 * 1024 * 1024)));
  if (bytes > 64 * 1024 * 1024) {
    const chunk = randomBytes(64 * 1024 * 1024);
    await pipeline(Readable.from((function* () { for (let i = 0; i < bytes / chunk.length; i++) yield chunk; })()), createWriteStream(file));
  }
  out[`${name}_up`] = bytes / (await up(file, `${prefix}${name}.bin`, bytes)) / 1e6;
  out[`${name}_down`] = bytes / (await down(`${prefix}${name}.bin`)) / 1e6;
}
out.list = await list10k();
s3.destroy();
console.log(JSON.stringify(out));
