/**
 * The configuration's help for operators, in process: unknown `LADING_…` variables are named
 * with the key most likely meant (by spelling, by shared words, by meaning), the test suite's
 * and CI's own variables are left alone, a listen port out of range is called that, and a log
 * level pino does not know is refused when the configuration is loaded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseListen, unknownVariables } from '../../src/wiring/config.ts';

const meant = (variable: string) => /did you mean (LADING_\w+)/.exec(unknownVariables({ [variable]: 'x' })[0] ?? '')?.[1] ?? null;

describe('configuration warnings', () => {
  it('names the key an unknown variable most likely meant', () => {
    assert.equal(meant('LADING_ZONES'), 'LADING_ZONE');
    assert.equal(meant('LADING_CATALOG_DRIVE'), 'LADING_CATALOG_DRIVER');
    assert.equal(meant('LADING_DATA_DIR'), 'LADING_DATA');
    // NOTE: one letter from s3.buckets (the S3 listener's mapped buckets) since that key came.
    assert.equal(meant('LADING_S3_BUCKET'), 'LADING_S3_BUCKETS');
    assert.equal(meant('LADING_BUCKET'), 'LADING_RESOURCE_S3_BUCKET');
    assert.equal(meant('LADING_S3_ENDPOINT'), 'LADING_RESOURCE_S3_ENDPOINT');
    assert.equal(meant('LADING_PORT'), 'LADING_LISTEN');
    assert.equal(meant('LADING_FOO'), null);
    assert.deepEqual(unknownVariables({ LADING_FOO: 'x' }), ['LADING_FOO is not a configuration variable and is ignored.']);
  });

  it('leaves known keys, the test suite\'s and CI\'s variables and other variables alone', () => {
    assert.deepEqual(unknownVariables({
      LADING_ZONE: 'z', LADING_SHUTDOWN_GRACE: '5', LADING_LOG_FORMAT: 'json', LADING_TEST_PG_URL: 'x', LADING_CI_CLEANUP: 'x', PATH: '/bin',
    }), []);
  });

  it('says a port is out of range', () => {
    assert.throws(() => parseListen('127.0.0.1:99999'), (err: Error) => err instanceof ConfigError && /port 99999 is out of range \(0 to 65535\)/.test(err.message));
    assert.throws(() => parseListen('127.0.0.1'), (err: Error) => err instanceof ConfigError && /expected host:port/.test(err.message));
  });

  it('names the log levels pino knows, as a configuration mistake', () => {
    assert.throws(() => loadConfig({ env: { LADING_LOG_LEVEL: 'verbose' } }),
      (err: Error) => err instanceof ConfigError && /LADING_LOG_LEVEL: log\.level: expected fatal, error, warn, info, debug, trace or silent, got 'verbose'/.test(err.message));
  });

  it('takes shutdown.grace and log.format, and refuses an unknown format', () => {
    const c = loadConfig({ env: { LADING_SHUTDOWN_GRACE: '5', LADING_LOG_FORMAT: 'pretty' } });
    assert.equal(c.shutdown.grace, 5);
    assert.equal(c.log.format, 'pretty');
    assert.equal(loadConfig({ env: {} }).log.format, 'auto');
    assert.throws(() => loadConfig({ env: { LADING_LOG_FORMAT: 'yaml' } }), /LADING_LOG_FORMAT: log\.format: expected auto, json or pretty, got 'yaml'/);
  });
});
