/**
 * Prometheus metrics as an operator's scraper sees them: a node started with `metrics.listen`
 * serves them on a listener of its own (never on the public port), in the text format, and the
 * counters move with the requests they count — an upload by its route pattern, its bytes, a
 * failed login, a share-link download, a failing PID job — on the embedded defaults (SQLite and
 * files). Readiness answers on both ports.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { LadingError } from '../../src/core/errors.ts';
import type { PidProvider } from '../../src/core/ports.ts';
import { ConfigError, loadConfig } from '../../src/wiring/config.ts';
import { OperatorError } from '../../src/wiring/operator-error.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { scrape } from '../helpers/prometheus.ts';

/** A handle service that is down: every registration fails, so PID jobs fail and are retried. */
const downProvider: PidProvider = {
  prefix: '21.T99999',
  async put() { throw new LadingError('UNAVAILABLE', 'The handle service is down (test).'); },
  async resolve() { return null; },
};

async function eventually(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('metrics on the embedded defaults', () => {
  let s: TestServer;
  let metrics: string;
  let alice: string;

  before(async () => {
    s = await startTestServer({
      zone: 'lading', 'metrics.listen': '127.0.0.1:0', 's3.listen': '127.0.0.1:0',
      'pid.rules': fileURLToPath(new URL('../../examples/rules.txt', import.meta.url)),
    }, { overrides: { pids: downProvider } });
    assert.ok(s.metricsUrl);
    metrics = s.metricsUrl;
    alice = await s.bearer('alice');
  });
  after(async () => {
    await s?.stop();
  });

  it('serves the text format on its own listener only, with every lading family typed and the process figures', async () => {
    const first = await scrape(metrics);
    for (const [name, type] of Object.entries({
      lading_http_requests_total: 'COUNTER', lading_http_request_duration_seconds: 'HISTOGRAM',
      lading_http_received_bytes_total: 'COUNTER', lading_http_sent_bytes_total: 'COUNTER', lading_http_uploads_in_flight: 'GAUGE',
      lading_catalog_operation_duration_seconds: 'HISTOGRAM', lading_jobs: 'GAUGE', lading_jobs_oldest_pending_age_seconds: 'GAUGE',
      lading_resumable_uploads_open: 'GAUGE', lading_resource_free_bytes: 'GAUGE', lading_resource_size_bytes: 'GAUGE',
      lading_build_info: 'GAUGE', process_cpu_user_seconds_total: 'COUNTER', nodejs_heap_size_used_bytes: 'GAUGE',
    })) {
      assert.equal(first.family(name).type, type.toLowerCase(), name);
    }
    assert.ok(first.value('lading_resource_free_bytes') > 0);
    assert.ok(first.value('lading_resource_size_bytes') >= first.value('lading_resource_free_bytes'));
    assert.equal(first.value('lading_resumable_uploads_open'), 0);
    assert.equal((await fetch(`${s.url}/metrics`)).status, 404, 'not on the public port');
    assert.equal((await fetch(`${s.url}/api/metrics`)).status, 404);
    assert.equal((await fetch(`${metrics}/metrics`, { method: 'POST' })).status, 405);
  });

  it('counts an upload by its route pattern, method and status, with its bytes and latency, and the catalog operations it made', async () => {
    const before = await scrape(metrics);
    const body = Buffer.alloc(300_000, 7);
    const res = await fetch(s.home('alice', 'big.bin'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
    assert.ok(res.status === 200 || res.status === 201, String(res.status));
    await res.arrayBuffer();
    const got = await scrape(metrics);
    const put = { front: 'api', route: '/api/registered/*', method: 'PUT', status: String(res.status) };
    assert.equal(got.value('lading_http_requests_total', put) - before.value('lading_http_requests_total', put), 1, got.text.split('\n').filter((l) => l.startsWith('lading_http_requests_total')).join('\n'));
    assert.equal(got.value('lading_http_request_duration_seconds', { route: '/api/registered/*', method: 'PUT' })
      - before.value('lading_http_request_duration_seconds', { route: '/api/registered/*', method: 'PUT' }), 1);
    assert.ok(got.value('lading_http_received_bytes_total', { front: 'api' }) - before.value('lading_http_received_bytes_total', { front: 'api' }) >= body.length);
    assert.ok(got.value('lading_http_sent_bytes_total') > before.value('lading_http_sent_bytes_total'));
    assert.ok(got.value('lading_catalog_operation_duration_seconds', { operation: 'commitObject' }) > before.value('lading_catalog_operation_duration_seconds', { operation: 'commitObject' }));
    assert.equal(got.value('lading_http_uploads_in_flight'), 0, 'none left in flight');
    for (const m of got.family('lading_http_requests_total').samples) {
      assert.ok(!m.labels.route?.includes('alice'), `a route label is a pattern, never a path: ${m.labels.route}`);
    }
    // A request no route matches is counted without its path.
    await fetch(`${s.url}/no/such/alice/path`);
    const unmatched = await scrape(metrics);
    assert.ok(unmatched.value('lading_http_requests_total', { route: 'unmatched', status: '404' }) >= 1);
  });

  it('counts WebDAV requests under front="dav" and S3 requests under front="s3", by pattern', async () => {
    const before = await scrape(metrics);
    const dav = await fetch(`${s.url}/dav/lading/home/alice/`, { method: 'PROPFIND', headers: { authorization: alice, depth: '0' } });
    assert.equal(dav.status, 207);
    await dav.arrayBuffer();
    assert.ok(s.s3Url, 'the S3 listener runs');
    const s3 = await fetch(`${s.s3Url}/alice/some/key.csv`);
    assert.equal(s3.status, 403, 'anonymous S3 requests are refused');
    await s3.arrayBuffer();
    const got = await scrape(metrics);
    const davKey = { front: 'dav', method: 'PROPFIND', status: '207' };
    const davCount = got.family('lading_http_requests_total').samples.filter((m) => m.labels.front === 'dav' && m.labels.method === 'PROPFIND' && m.labels.status === '207');
    assert.ok(davCount.length > 0 && davCount.every((m) => !m.labels.route?.includes('alice')), JSON.stringify(davCount));
    assert.ok(got.value('lading_http_requests_total', davKey) - before.value('lading_http_requests_total', davKey) >= 1);
    const s3Key = { front: 's3', route: '/{bucket}/{key}', method: 'GET', status: '403' };
    assert.equal(got.value('lading_http_requests_total', s3Key) - before.value('lading_http_requests_total', s3Key), 1);
  });

  it('counts a failed login, and the limiter\'s refusals', async () => {
    const before = await scrape(metrics);
    const login = (password: string) => fetch(`${s.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password }) });
    assert.equal((await login('wrong')).status, 401);
    const got = await scrape(metrics);
    assert.equal(got.value('lading_login_failures_total', { via: 'api' }) - before.value('lading_login_failures_total', { via: 'api' }), 1);
    for (let i = 0; i < 4; i++) await login('wrong');
    assert.equal((await login('wrong')).status, 429);
    const limited = await scrape(metrics);
    assert.equal(limited.value('lading_limit_refusals_total', { limit: 'login' }) - before.value('lading_limit_refusals_total', { limit: 'login' }), 1);
    assert.equal(limited.value('lading_http_requests_total', { route: '/auth/login', status: '429' }), 1);
  });

  it('counts a share link\'s download as a use', async () => {
    await fetch(s.home('alice', 'shared.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'shared bytes' });
    const made = await fetch(`${s.url}/api/shares`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' },
      body: JSON.stringify({ path: `/lading/home/alice/shared.txt`, kind: 'read' }),
    });
    assert.equal(made.status, 201);
    const { token } = (await json(made)).Response.data as { token: string };
    const before = await scrape(metrics);
    const got = await fetch(`${s.url}/api/shared/${token}`);
    assert.equal(got.status, 200);
    assert.equal(await got.text(), 'shared bytes');
    const after = await scrape(metrics);
    assert.equal(after.value('lading_share_link_uses_total', { kind: 'read' }) - before.value('lading_share_link_uses_total', { kind: 'read' }), 1);
    for (const m of after.family('lading_http_requests_total').samples) assert.ok(!m.labels.route?.includes(token), 'no token in a label');
  });

  it('shows a failing PID job in the failures and the queue', async () => {
    await fetch(s.home('alice', 'pid.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'needs a PID' });
    await eventually('a job failure is counted', async () => (await scrape(metrics)).value('lading_job_failures_total', { kind: 'rule', final: 'false' }) >= 1);
    const got = await scrape(metrics);
    assert.ok(got.value('lading_jobs', { state: 'pending' }) + got.value('lading_jobs', { state: 'running' }) >= 1, 'the job waits for its retry');
    assert.ok(got.value('lading_jobs_oldest_pending_age_seconds') >= 0);
  });

  it('serves every metric the example Grafana dashboard queries (the pool\'s only on PostgreSQL)', async () => {
    const dashboard = JSON.parse(await readFile(new URL('../../examples/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const queried = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\b(?:lading|process|nodejs)_[a-z0-9_]+/g) ?? [])));
    const text = (await scrape(metrics)).text;
    const missing = [...queried].map((name) => name.replace(/_bucket$/, ''))
      .filter((name) => !name.startsWith('lading_catalog_pool_') && !text.includes(`# TYPE ${name} `));
    assert.deepEqual(missing, []);
    assert.ok(queried.size >= 15, [...queried].join(' '));
  });

  it('answers readiness on the public port and on the metrics listener', async () => {
    const ready = await fetch(`${s.url}/api/ready`);
    assert.equal(ready.status, 200);
    assert.match(ready.headers.get('cache-control') ?? '', /no-store/);
    assert.equal((await json(ready)).Response.data, 'ready');
    const onMetrics = await fetch(`${metrics}/ready`);
    assert.equal(onMetrics.status, 200);
    assert.equal((await json(onMetrics)).Response.data, 'ready');
    assert.equal((await fetch(`${s.url}/api/status`)).status, 200, 'liveness stays');
  });
});

describe('metrics when metrics.listen is unset', () => {
  it('keeps none and opens no listener, while readiness answers', async () => {
    const s = await startTestServer();
    try {
      assert.equal(s.metricsUrl, null);
      assert.equal(s.metrics, null);
      assert.equal((await fetch(`${s.url}/metrics`)).status, 404);
      assert.equal((await fetch(`${s.url}/api/ready`)).status, 200);
    } finally {
      await s.stop();
    }
  });
});

describe('metrics.listen mistakes', () => {
  it('refuses a malformed address, and one in use, in one line naming the key', async () => {
    assert.throws(() => loadConfig({ env: { LADING_METRICS_LISTEN: 'nowhere' } }), (err: unknown) => err instanceof ConfigError && err.message === "metrics.listen: expected host:port, got 'nowhere'.");
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const err = await startTestServer({ 'metrics.listen': `127.0.0.1:${port}` }).then(async (s) => { await s.stop(); return null; }, (e: unknown) => e);
      assert.ok(err instanceof OperatorError, String(err));
      assert.equal(err.message, `metrics.listen: 127.0.0.1:${port} is already in use by another process; stop it, or set another address with LADING_METRICS_LISTEN.`);
    } finally {
      taken.close();
    }
  });
});
