/**
 * Metrics and readiness of a node on PostgreSQL and S3: the pool's gauges, an upload counted by
 * its route pattern and its bytes, no free-space gauge (the store is no file system), and
 * readiness that answers 200, then 503 with the envelope and Retry-After while PostgreSQL is
 * down, then 200 again by itself once it is back.
 *
 * PostgreSQL is a private cluster of this test (`helpers/private-postgres.ts`), since it is
 * stopped; the S3 store is the shared one (`.ci/services/swift.sh`). Without them it skips,
 * except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { scrape } from '../helpers/prometheus.ts';

const s3 = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
  key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY, region: process.env.LADING_TEST_S3_REGION,
};
const postgres = s3.endpoint && s3.bucket && s3.key && s3.secret && s3.region ? await startPrivatePostgres() : 'needs LADING_TEST_S3_* (source .ci/services/swift.sh)';

if (typeof postgres === 'string') {
  const message = `metrics on PostgreSQL and S3: ${postgres}.`;
  if (process.env.CI) test('metrics and readiness on PostgreSQL and S3', () => assert.fail(message));
  else test('metrics and readiness on PostgreSQL and S3', { skip: message }, () => {});
} else {
  onPostgresAndS3(postgres);
}

function onPostgresAndS3(db: PrivatePostgres): void {
  describe('metrics and readiness on PostgreSQL and S3', { timeout: 120_000 }, () => {
    let s: TestServer;
    let alice: string;
    const prefix = `lading_test_metrics_${randomBytes(4).toString('hex')}/`;

    before(async () => {
      s = await startTestServer({
        'metrics.listen': '127.0.0.1:0',
        'catalog.driver': 'postgres', 'catalog.url': db.url,
        'resource.driver': 's3', 'resource.s3.endpoint': s3.endpoint, 'resource.s3.bucket': s3.bucket,
        'resource.s3.region': s3.region, 'resource.s3.prefix': prefix,
        'resource.s3.access_key_id': s3.key, 'resource.s3.secret_access_key': s3.secret,
      });
      alice = await s.bearer('alice');
    });
    after(async () => {
      await s?.stop();
      await db.destroy();
    });

    it('shows the pool, counts an upload with its bytes, and has no free-space gauge', async () => {
      const before = await scrape(s.metricsUrl!);
      const body = randomBytes(200_000);
      const res = await fetch(s.home('alice', 'a.bin'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
      assert.ok(res.status === 200 || res.status === 201, String(res.status));
      await res.arrayBuffer();
      const got = await scrape(s.metricsUrl!);
      const put = { route: '/api/registered/*', method: 'PUT', status: String(res.status) };
      assert.equal(got.value('lading_http_requests_total', put) - before.value('lading_http_requests_total', put), 1);
      assert.ok(got.value('lading_http_received_bytes_total') - before.value('lading_http_received_bytes_total') >= body.length);
      assert.ok(got.value('lading_catalog_pool_connections') >= 1, 'the pool has connections');
      assert.ok(got.value('lading_catalog_pool_idle_connections') <= got.value('lading_catalog_pool_connections'));
      assert.equal(got.family('lading_catalog_pool_waiting_requests').type, 'gauge');
      assert.ok(got.value('lading_catalog_operation_duration_seconds', { operation: 'commitObject' }) >= 1);
      assert.equal(got.value('lading_resource_free_bytes'), 0);
      assert.ok(!got.text.includes('lading_resource_free_bytes'), 'no free space for an object store');
      assert.equal(got.value('lading_resource_errors_total'), 0);
    });

    it('is ready, then answers 503 with Retry-After while PostgreSQL is down, then is ready again', async () => {
      assert.equal((await fetch(`${s.url}/api/ready`)).status, 200);
      await db.stop();
      try {
        // NOTE: an answer is reused for a second; the next check finds PostgreSQL gone.
        await sleep(1100);
        const down = await fetch(`${s.url}/api/ready`);
        assert.equal(down.status, 503);
        assert.equal(down.headers.get('retry-after'), '5');
        assert.match(down.headers.get('content-type') ?? '', /^application\/json/);
        const envelope = await json(down);
        assert.equal(envelope.Meta.status, 503);
        assert.match(JSON.stringify(envelope.Response.errors), /catalog/);
        const onMetrics = await fetch(`${s.metricsUrl}/ready`);
        assert.equal(onMetrics.status, 503);
        assert.equal(onMetrics.headers.get('retry-after'), '5');
        assert.equal((await fetch(`${s.url}/api/status`)).status, 200, 'still alive');
        const scraped = await scrape(s.metricsUrl!);
        assert.equal(scraped.value('lading_jobs'), 0, 'a figure the catalog cannot give is left out, the scrape still answers');
      } finally {
        await db.start();
      }
      const until = Date.now() + 30_000;
      let status = 0;
      while (Date.now() < until && (status = (await fetch(`${s.url}/api/ready`)).status) !== 200) await sleep(200);
      assert.equal(status, 200, 'ready again once PostgreSQL is back');
    });
  });
}
