/**
 * Fuzzing as part of `npm test`: requests generated from the live `/api/specs` document of a
 * test server (every operation, valid and invalid values, with and without a token, chained
 * create → read → rename → list) and checked against one property per sub-test. Seeded and
 * bounded: LADING_FUZZ_SEED, LADING_FUZZ_RUNS (scenarios per property), LADING_FUZZ_SECONDS
 * (wall-clock budget of the whole file) and LADING_FUZZ_PATH (replay one reported failure).
 * What today's server fails is `todo`; FINDINGS.md lists it with reproducing requests.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PROPERTIES } from './fuzz-properties.ts';
import { type FuzzServer, startFuzzServer } from './fuzz-server.ts';
import { checkProperty, fuzzRunFromEnv, settingsFor } from './scenario-runner.ts';

/**
 * Properties today's server does not have, with the findings (FINDINGS.md) that break them.
 * Remove an entry when they are fixed: the sub-test then fails the suite again.
 */
const TODO: Record<string, string> = {};

describe('fuzz: requests generated from /api/specs', () => {
  let fuzz: FuzzServer;
  let deadline: number;
  const run = fuzzRunFromEnv(process.env);

  before(async () => {
    fuzz = await startFuzzServer();
    deadline = Date.now() + run.totalMs;
  });
  after(() => fuzz.stop());

  it('reads every operation of the document', () => {
    const ids = fuzz.target.operations.map((op) => op.id);
    for (const id of ['POST /api/registered', 'PUT /api/registered/{*}', 'PATCH /api/registered/{*}', 'POST /api/registered/{*}', 'GET /api/registered/{*}', 'POST /auth/login', 'GET /api/pids/{*}']) {
      assert.ok(ids.includes(id), `${id} is missing from /api/specs (has ${ids.join(', ')})`);
    }
  });

  it('marks as todo only properties that exist', () => {
    for (const name of Object.keys(TODO)) assert.ok(PROPERTIES.some((p) => p.name === name), `TODO names no property '${name}'`);
  });

  for (const [i, property] of PROPERTIES.entries()) {
    it(`${property.name}: ${property.title}`, { todo: TODO[property.name] }, async (t) => {
      const share = Math.max(0, deadline - Date.now()) / (PROPERTIES.length - i);
      const outcome = await checkProperty(fuzz.target, property, settingsFor(run, share));
      t.diagnostic(`seed ${run.seed}: ${outcome.scenarios} scenarios, ${outcome.requests} requests in ${(outcome.ms / 1000).toFixed(1)} s`);
      if (outcome.failure) assert.fail(outcome.failure);
    });
  }
});
