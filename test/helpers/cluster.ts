/**
 * What the multi-node end-to-end tests share: the services they need (PostgreSQL, an S3 store,
 * nginx) read from the environment the `.ci/services` scripts export, `lading serve` processes,
 * and nginx balancing round-robin in front of them, configured as the README says.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { constants } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  AbortMultipartUploadCommand, DeleteObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client,
} from '@aws-sdk/client-s3';

const root = join(import.meta.dirname, '..', '..');
const lading = join(root, 'bin', 'lading');

/** The services of a cluster from the environment, and what is missing (with how to start it). */
export async function clusterServices() {
  const NGINX = process.env.LADING_TEST_NGINX ?? '/usr/sbin/nginx';
  const pgUrl = process.env.LADING_TEST_PG_URL;
  const s3 = {
    endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
    key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY,
    region: process.env.LADING_TEST_S3_REGION,
  };
  const missing: string[] = [];
  if (!pgUrl) missing.push('PostgreSQL (LADING_TEST_PG_URL: `source .ci/services/postgres.sh`)');
  if (!s3.endpoint || !s3.bucket || !s3.key || !s3.secret || !s3.region) missing.push('S3 (LADING_TEST_S3_*: `source .ci/services/swift.sh`)');
  if (!(await access(NGINX, constants.X_OK).then(() => true, () => false))) missing.push(`nginx (${NGINX}: install the Debian package nginx)`);
  return { NGINX, pgUrl, s3, missing };
}

/** A running `lading serve` process. */
export interface Node { proc: ChildProcess; url: string; pid: number; log: () => string }

/** A TCP port free on 127.0.0.1 now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `lading serve` on `dataDir` (port 0 unless `listen` says) and resolves once it listens. */
export function startNode(dataDir: string, env: NodeJS.ProcessEnv, listen = '127.0.0.1:0'): Promise<Node> {
  const proc = spawn(lading, ['serve', '--data', dataDir, '--listen', listen], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => { out += String(c); });
  proc.stderr!.on('data', (c) => { out += String(c); });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`lading serve did not start in 30 s:\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', check);
      resolve({ proc, url: m[1]!, pid: proc.pid!, log: () => out });
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`lading serve exited (${code}) before listening:\n${out}`));
    });
  });
}

/** Sends `signal` and waits for the process to exit (SIGKILL after 10 s). */
export async function stopProcess(proc: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** nginx in front of the nodes, with everything it writes under `dir`. */
export function nginxConfig(dir: string, port: number, upstreams: string[]): string {
  const hosts = upstreams.map((u) => new URL(u).host);
  return `# lading behind nginx: round-robin over the nodes, bodies streamed both ways.
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream lading {
${hosts.map((h) => `    server ${h} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 0;
    location / {
      proxy_pass http://lading;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_request_buffering off;
      proxy_buffering off;
      proxy_read_timeout 300s;
      proxy_send_timeout 300s;
      # A node that refuses the connection or fails before answering is skipped. A body already
      # streamed to a node that died cannot be resent (it is not buffered), so such an upload is
      # answered 502 and the client retries; nothing is passed on after a response has begun.
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
    }
  }
}
`;
}

/**
 * Removes every object and every unfinished multipart upload under `prefix` of `bucket`: what a
 * test's nodes left behind, killed ones included. Failures are ignored (cleanup after a test).
 */
export async function emptyS3Prefix(client: S3Client, bucket: string, prefix: string): Promise<void> {
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix })).catch(() => null);
  for (const u of uploads?.Uploads ?? []) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! })).catch(() => {});
  }
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })).catch(() => null);
    for (const o of page?.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key! })).catch(() => {});
    token = page?.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}
