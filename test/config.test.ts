import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { CONFIG_KEYS, CONFIG_SCHEMA, ConfigError, isConfig, loadConfig, parseListen } from '../src/wiring/config.ts';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({ env: {} });
    assert.equal(c.listen, '127.0.0.1:8080');
    assert.equal(c.data, './lading-data');
    assert.equal(c.catalog.driver, 'sqlite');
    assert.equal(c.resource.driver, 'fs');
    assert.equal(c.pid.rules, null);
    assert.equal(c.proxy.lifetime, 43200);
  });

  it('takes the file, then LADING_ variables, then flags', () => {
    const fileText = JSON.stringify({ zone: 'fromfile', pid: { await_timeout: 3 }, limits: { upload_bytes: 10 } });
    const c = loadConfig({ env: { LADING_ZONE: 'fromenv', LADING_LIMITS_UPLOAD_BYTES: '20' }, fileText, flags: { 'limits.upload_bytes': 30 } });
    assert.equal(c.zone, 'fromenv');
    assert.equal(c.pid.await_timeout, 3);
    assert.equal(c.limits.upload_bytes, 30);
  });

  it('checks a whole configuration as TypeBox\'s Value.Check does', () => {
    const keys = CONFIG_KEYS.map((k) => k.key as string);
    const leaf = fc.oneof(
      fc.constant(undefined), fc.constant(null), fc.string({ maxLength: 4 }), fc.boolean(), fc.double(), fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(NaN, Infinity, -1, 0, 'sqlite', 'postgres', 'info', 'auto'), fc.constant({}).map(() => ({})), fc.constant([]).map(() => []),
    );
    // A valid configuration with some keys replaced, removed or added, at any depth.
    const edits = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...keys), fc.constantFrom('extra', 'log.extra', 'log', 'resource.s3', 'pid')), leaf), { maxLength: 3 });
    fc.assert(fc.property(edits, (changes) => {
      const value = structuredClone(loadConfig({ env: {} })) as unknown as Record<string, unknown>;
      for (const [key, v] of changes) {
        const parts = key.split('.');
        let cur: Record<string, unknown> = value;
        for (const part of parts.slice(0, -1)) cur = (typeof cur[part] === 'object' && cur[part] !== null ? cur[part] : (cur[part] = {})) as Record<string, unknown>;
        if (v === undefined) delete cur[parts.at(-1)!];
        else cur[parts.at(-1)!] = v;
      }
      assert.equal(isConfig(value), Value.Check(CONFIG_SCHEMA, value));
    }), { numRuns: 2000 });
    // Every key set to each kind of value, one at a time (removed, for undefined; undefined, for PRESENT_UNDEFINED).
    const PRESENT_UNDEFINED = Symbol('present but undefined');
    const values = [undefined, PRESENT_UNDEFINED, null, '', 'x', 'sqlite', 0, -1, 1.5, NaN, Infinity, -Infinity, true, {}, []];
    for (const key of [...keys, 'extra', 'log.extra']) {
      for (const v of values) {
        const value = structuredClone(loadConfig({ env: {} })) as unknown as Record<string, unknown>;
        const parts = key.split('.');
        const parent = parts.slice(0, -1).reduce((o, p) => o[p] as Record<string, unknown>, value);
        if (v === undefined) delete parent[parts.at(-1)!];
        else parent[parts.at(-1)!] = v === PRESENT_UNDEFINED ? undefined : structuredClone(v);
        assert.equal(isConfig(value), Value.Check(CONFIG_SCHEMA, value), `${key} = ${String(v)}`);
      }
    }
    assert.ok(isConfig(loadConfig({ env: {} })));
  });

  it('names the key of every mistake', () => {
    const bad: [Parameters<typeof loadConfig>[0], RegExp][] = [
      [{ env: {}, fileText: '{"zone": ', fileName: 'c.json' }, /c\.json: not valid JSON/],
      [{ env: {}, fileText: '{"zonee": "x"}', fileName: 'c.json' }, /unknown key 'zonee'/],
      [{ env: {}, fileText: '{"pid": {"rulez": "x"}}' }, /unknown key 'pid\.rulez'/],
      [{ env: { LADING_LIMITS_UPLOAD_BYTES: 'lots' } }, /LADING_LIMITS_UPLOAD_BYTES: 'limits\.upload_bytes' must be a non-negative number/],
      [{ env: { LADING_TRUST_PROXY: 'maybe' } }, /'trust_proxy' must be true or false/],
      [{ env: { LADING_LISTEN: 'nowhere' } }, /listen: expected host:port/],
      [{ env: { LADING_JOBS_LEASE: '0' } }, /jobs\.lease: must be at least 1 second/],
      [{ env: { LADING_AUTH_TOKEN_TTL_MAX: '3600' } }, /auth\.token_ttl_max: must be at least auth\.token_ttl \(86400\), got 3600/],
      [{ env: { LADING_RESOURCE_INLINE_MAX: '2000000' } }, /resource\.inline_max: must be a whole number of bytes from 0 to 1048576, got 2000000/],
      [{ env: { LADING_RESOURCE_INLINE_MAX: '1.5' } }, /resource\.inline_max: must be a whole number of bytes/],
      [{ env: { LADING_SHARES_DROP_MAX_BYTES: '0' } }, /shares\.drop_max_bytes: must be a whole number of bytes, at least 1, got 0/],
      [{ env: { LADING_PID_PROVIDER: 'doi' } }, /pid\.provider: expected embedded or handle, got 'doi'/],
      [{ env: {}, fileText: '{"zone": 7}', fileName: 'c.json' }, /c\.json: 'zone' must be a string/],
      [{ env: {}, flags: { 'pid.rulez': 'x' } as Record<string, unknown> }, /--pid\.rulez: unknown key/],
      [{ env: { LADING_S3_DOMAIN: 'https://s3.example.org' } }, /s3\.domain: must be a lower-case DNS name/],
      [{ env: { LADING_S3_BUCKETS: 'Genomes=/lading/g' } }, /s3\.buckets: 'Genomes=\/lading\/g' is not name=\/lading\/path/],
      [{ env: { LADING_S3_BUCKETS: 'genomes=/other/g' } }, /s3\.buckets: '\/other\/g' \(bucket genomes\) is not below the zone \/lading/],
      [{ env: { LADING_S3_BUCKETS: 'genomes=/lading/a/../b' } }, /s3\.buckets: '\/lading\/a\/\.\.\/b' \(bucket genomes\) is not a valid path/],
      [{ env: { LADING_S3_BUCKETS: 'gg1=/lading/a,gg1=/lading/b' } }, /s3\.buckets: the bucket gg1 is named twice/],
    ];
    for (const [input, message] of bad) assert.throws(() => loadConfig(input), (err: Error) => err instanceof ConfigError && message.test(err.message), String(message));
  });

  it('keeps an empty variable from overriding, and strips the trailing slash of public_url', () => {
    const c = loadConfig({ env: { LADING_ZONE: '', LADING_PUBLIC_URL: 'https://x.example.org//' }, fileText: '{"zone": "z"}' });
    assert.equal(c.zone, 'z');
    assert.equal(c.public_url, 'https://x.example.org');
  });

  it('documents every key in the configuration reference (docs/operators.md) with its variable and its meaning from the schema', async () => {
    const readme = await readFile(new URL('../docs/operators.md', import.meta.url), 'utf8');
    for (const { key, env, doc } of CONFIG_KEYS) {
      assert.equal(env, 'LADING_' + key.replace(/\./g, '_').toUpperCase());
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${key}\` | \`${env}\` |`));
      assert.ok(row, `README lacks the configuration key ${key}`);
      assert.ok(row.endsWith(`| ${doc} |`), `README's meaning of ${key} differs from the schema's`);
    }
  });

  it('is read by the composition root only: no module outside src/wiring imports it', async () => {
    const src = new URL('../src/', import.meta.url).pathname;
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts') && !f.startsWith('wiring/'));
    assert.ok(files.includes(join('cli', 'main.ts')));
    for (const f of files) {
      assert.doesNotMatch(await readFile(join(src, f), 'utf8'), /from '[./]*\/wiring\/config\.ts'/, `${f} imports the configuration`);
    }
  });

  it('parses listen addresses, IPv6 in brackets', () => {
    assert.deepEqual(parseListen('0.0.0.0:80'), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseListen('[::1]:8080'), { host: '::1', port: 8080 });
    assert.throws(() => parseListen('host:99999'), ConfigError);
  });
});
