/**
 * The web app's end-to-end scenario (`scenario.ts`) once more against the scale-out setup:
 * three `lading serve` nodes on one PostgreSQL catalog (a fresh schema) and one S3 store (a
 * fresh key prefix), behind nginx balancing round-robin, as `test/e2e/three-nodes.test.ts`
 * starts them. Mid-way through the 200 MiB upload every node is killed with SIGKILL and
 * started again on the same port; the upload resumes on whichever node nginx picks.
 * Screenshots go to $LADING_SCREENSHOT_DIR/three-nodes. Needs `.ci/services/postgres.sh`,
 * `.ci/services/swift.sh`, nginx and Chromium; skips without them, except under CI.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { S3Client } from '@aws-sdk/client-s3';
import type { Browser } from 'playwright-core';
import { type Node, clusterServices, emptyS3Prefix, freePort, nginxConfig, startNode, stopProcess } from '../helpers/cluster.ts';
import { lading } from '../helpers/process.ts';
import { Relay } from '../e2e/tus-support.ts';
import { browserSkip, launchBrowser } from '../helpers/browser.ts';
import { runScenario, screenshotDir } from './scenario.ts';

const ZONE = 'tz';
const PREFIX = '21.T77777';
const OTHER = { user: 'bob', password: 'bob has a password too' };
const { NGINX, pgUrl, s3, missing } = await clusterServices();
if (browserSkip) missing.push(`Chromium (${browserSkip})`);

if (missing.length > 0) {
  const message = `the web app on three nodes needs ${missing.join(', ')}.`;
  if (process.env.CI) test('the web app on three nodes behind nginx, PostgreSQL and S3', () => assert.fail(message));
  else test('the web app on three nodes behind nginx, PostgreSQL and S3', { skip: message }, () => {});
} else {
  describe('the web app on three nodes behind nginx, PostgreSQL and S3', { timeout: 600_000 }, () => {
    const schema = `lading_test_web_${randomBytes(4).toString('hex')}`;
    const prefix = `${schema}/`;
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let data: string[];
    let nodes: Node[] = [];
    let nginx: ChildProcess | undefined;
    let nginxLog = '';
    let relay: Relay;
    let base: string;
    let browser: Browser;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-web-nodes-'));
      await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/** pid.register\nobject.renamed /${ZONE}/home/** pid.update\n`);
      const relayPort = await freePort();
      base = `http://127.0.0.1:${relayPort}`;
      env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LADING_'))),
        LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn',
        LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: pgUrl, LADING_CATALOG_SCHEMA: schema,
        LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: s3.endpoint, LADING_RESOURCE_S3_BUCKET: s3.bucket,
        LADING_RESOURCE_S3_REGION: s3.region, LADING_RESOURCE_S3_PREFIX: prefix,
        LADING_RESOURCE_S3_ACCESS_KEY_ID: s3.key, LADING_RESOURCE_S3_SECRET_ACCESS_KEY: s3.secret,
        LADING_PUBLIC_URL: base, LADING_TRUST_PROXY: 'true', LADING_UPLOADS_LEASE: '3',
        LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PREFIX: PREFIX,
      };
      // NOTE: node 1 alone first: it creates the schema, the CA and the master key, which the
      // others get copies of, as a deployment provisions them.
      data = [1, 2, 3].map((i) => join(dir, `node${i}`));
      nodes.push(await startNode(data[0]!, env));
      for (const d of data.slice(1)) {
        await mkdir(d, { recursive: true, mode: 0o700 });
        await cp(join(data[0]!, 'ca'), join(d, 'ca'), { recursive: true });
        await cp(join(data[0]!, 'keys'), join(d, 'keys'), { recursive: true });
      }
      nodes.push(...await Promise.all(data.slice(1).map((d) => startNode(d, env))));
      lading(['user', 'add', 'alice', '--data', data[0]!], env, 'correct horse battery staple\n');
      lading(['user', 'add', OTHER.user, '--data', data[0]!], env, `${OTHER.password}\n`);

      const lbPort = await freePort();
      const lb = `http://127.0.0.1:${lbPort}`;
      const ngDir = join(dir, 'nginx');
      await mkdir(ngDir);
      await writeFile(join(ngDir, 'nginx.conf'), nginxConfig(ngDir, lbPort, nodes.map((n) => n.url)));
      nginx = spawn(NGINX, ['-p', ngDir, '-c', join(ngDir, 'nginx.conf'), '-e', join(ngDir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
      nginx.stdout!.on('data', (c) => { nginxLog += String(c); });
      nginx.stderr!.on('data', (c) => { nginxLog += String(c); });
      for (let i = 0; i < 100 && !(await fetch(`${lb}/api/status`).then((r) => r.ok, () => false)); i++) await sleep(100);
      assert.ok(await fetch(`${lb}/api/status`).then((r) => r.ok, () => false), `nginx does not answer at ${lb}:\n${nginxLog}`);
      relay = new Relay(lb);
      await relay.listen(relayPort);
      browser = await launchBrowser();
    });

    after(async () => {
      await browser?.close();
      await relay?.close();
      await stopProcess(nginx, 'SIGQUIT');
      await Promise.all(nodes.map((n) => stopProcess(n.proc)));
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
      const s3client = new S3Client({
        endpoint: s3.endpoint!, region: s3.region!, forcePathStyle: true,
        credentials: { accessKeyId: s3.key!, secretAccessKey: s3.secret! },
        requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
      });
      await emptyS3Prefix(s3client, s3.bucket!, prefix);
      s3client.destroy();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('signs in, uploads through a restart of every node, checks, downloads, renames, shares, revokes and signs out', async (t) => {
      await runScenario(t, browser, {
        base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
        shots: screenshotDir('three-nodes'),
        restart: async () => {
          const listens = nodes.map((n) => new URL(n.url).host);
          await Promise.all(nodes.map((n) => stopProcess(n.proc, 'SIGKILL')));
          nodes = await Promise.all(data.map((d, i) => startNode(d, env, listens[i])));
          t.diagnostic(`every node killed and started again at ${nodes.map((n) => n.url).join(', ')}`);
        },
      });
    });
  });
}
