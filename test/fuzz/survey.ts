/**
 * Lists every distinct violation the fuzzer finds, over all properties at once and without
 * stopping at the first one as the sub-tests do: what FINDINGS.md is written from, and what is
 * left after a fix. Not a test (`npm test` does not run it); it starts its own server.
 *
 *   node --disable-warning=ExperimentalWarning test/fuzz/survey.ts [seed …]
 *
 * LADING_FUZZ_RUNS bounds the scenarios and LADING_FUZZ_SECONDS the time of each seed.
 */
import { describeExchange, type Exchange } from './http-exchange.ts';
import { type FuzzProperty, PROPERTIES } from './fuzz-properties.ts';
import { startFuzzServer } from './fuzz-server.ts';
import { DEFAULT_SEED, checkProperty, fuzzRunFromEnv, settingsFor } from './scenario-runner.ts';

interface Group {
  count: number;
  violation: string;
  exchanges: Exchange[];
}

const groups = new Map<string, Group>();

/** Violations that differ only in names, paths or counts are one finding. */
function groupKey(property: string, violation: string, ex: Exchange): string {
  const shape = violation.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/\d+/g, 'N');
  return `${property} · ${ex.operationId} · ${ex.response?.status ?? 'no response'} · ${shape}`;
}

function record(property: string, violation: string, exchanges: Exchange[]): void {
  const key = groupKey(property, violation, exchanges[0]!);
  const group = groups.get(key);
  if (group) group.count++;
  else groups.set(key, { count: 1, violation, exchanges });
}

/** Every property's checks, recording instead of failing. */
const everything: FuzzProperty = {
  name: 'survey',
  title: 'every property, recorded',
  exchange(ex, op, resolved) {
    for (const p of PROPERTIES) {
      const violation = p.exchange?.(ex, op, resolved);
      if (violation) record(p.name, violation, [ex]);
    }
    return null;
  },
  accepted(a) {
    for (const p of PROPERTIES) {
      const violation = p.accepted?.(a);
      if (violation) record(p.name, violation, [a.exchange, a.metadata, a.listing]);
    }
    return null;
  },
};

const seeds = process.argv.slice(2).map(Number);
const fuzz = await startFuzzServer();
try {
  const run = fuzzRunFromEnv(process.env);
  for (const seed of seeds.length ? seeds : [DEFAULT_SEED]) {
    const outcome = await checkProperty(fuzz.target, everything, { ...settingsFor({ ...run, seed }, run.totalMs), searchMs: run.totalMs });
    console.error(`seed ${seed}: ${outcome.scenarios} scenarios, ${outcome.requests} requests in ${(outcome.ms / 1000).toFixed(1)} s`);
    if (outcome.failure) console.log(outcome.failure);
  }
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`\n### ${key} (${group.count}×)\n${group.violation}`);
    for (const ex of group.exchanges) console.log(describeExchange(fuzz.target.base, ex));
  }
} finally {
  await fuzz.stop();
}
