/**
 * Runs one fuzz property under fast-check against a live lading server: each run is a scenario
 * of generated requests in a fresh sandbox collection, where every 2xx create, upload or rename
 * is followed by reads of the entity and of its parent's listing, and every exchange goes
 * through the property. Bounded by a run count and a wall-clock budget; a failure comes back as
 * one readable block with the seed and path that replay it. Starts no server.
 */
import fc from 'fast-check';
import type { Operation } from './openapi-document.ts';
import { type Exchange, describeExchange, send } from './http-exchange.ts';
import {
  type Credentials, type RequestPlan, type ResolvedRequest, type ScenarioState,
  encodeBackendPath, parentPathOf, requestPlanArb, resolvePlan,
} from './request-plans.ts';
import { type Accepted, type FuzzProperty, successData } from './fuzz-properties.ts';

/** The server under test and what the fuzzer knows of it. */
export interface FuzzTarget {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  base: string;
  /** The user's home collection, e.g. `/tz/home/alice`; sandboxes are made inside it. */
  home: string;
  operations: readonly Operation[];
  creds: Credentials;
}

export interface FuzzSettings {
  seed: number;
  /** Most scenarios to run. */
  numRuns: number;
  /** Time to look for a failure, in ms; scenarios after it pass without sending anything. */
  searchMs: number;
  /** Time to shrink a failure once found, in ms. */
  shrinkMs: number;
  /** fast-check's replay path of a reported failure. */
  path?: string;
  /** Longest scenario, in generated requests. */
  maxSteps: number;
}

/**
 * Defaults of a run: a fixed seed, and bounds a 2-core CI machine gets through in under a
 * minute. NOTE: any seed would do; this one meets the findings of FINDINGS.md early, so the
 * `todo` sub-tests show them within the budget.
 */
export const DEFAULT_SEED = 16;
const DEFAULT_RUNS = 150;
const DEFAULT_SECONDS = 45;

function envNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got '${raw}'`);
  return n;
}

/** What the environment sets for a fuzz run: seed, runs per property, total time, replay path. */
export interface FuzzRun {
  seed: number;
  numRuns: number;
  totalMs: number;
  path: string | undefined;
}

/**
 * Reads LADING_FUZZ_SEED, LADING_FUZZ_RUNS (scenarios per property), LADING_FUZZ_SECONDS
 * (wall-clock budget of all properties together) and LADING_FUZZ_PATH (replays one reported
 * failure). Throws on a value that is not a number.
 */
export function fuzzRunFromEnv(env: NodeJS.ProcessEnv): FuzzRun {
  return {
    seed: envNumber(env, 'LADING_FUZZ_SEED', DEFAULT_SEED),
    numRuns: envNumber(env, 'LADING_FUZZ_RUNS', DEFAULT_RUNS),
    totalMs: envNumber(env, 'LADING_FUZZ_SECONDS', DEFAULT_SECONDS) * 1000,
    path: env.LADING_FUZZ_PATH || undefined,
  };
}

/**
 * The settings of one property given `ms` for it: three fifths to search, two to shrink a
 * failure. A property that fails early leaves its unused time to the next ones.
 */
export function settingsFor(run: FuzzRun, ms: number): FuzzSettings {
  return { seed: run.seed, numRuns: run.numRuns, searchMs: ms * 0.6, shrinkMs: ms * 0.4, path: run.path, maxSteps: 12 };
}

export interface PropertyOutcome {
  /** Scenarios that ran (not cut by the budget), and the requests they sent. */
  scenarios: number;
  requests: number;
  ms: number;
  /** The readable failure block, or null when the property held. */
  failure: string | null;
}

class Violation extends Error {
  override name = 'Violation';
}
class OutOfBudget extends Error {}

/** Numbers sandboxes across every property run of the process, so none is made twice. */
let sandboxes = 0;

const GET_ENTITY = 'GET /api/registered/{*}';

// NOTE: lading's operations that make or rename an entity, and how their responses name it
// (spec 2.3–2.5): the oracle of the names-listed property. `path` is the collection itself for
// a create, the parent for an upload or a rename.
const MAKES_ENTITY: Record<string, 'collection' | 'dataobject' | 'renamed'> = {
  'POST /api/registered': 'collection',
  'PUT /api/registered/{*}': 'dataobject',
  'PATCH /api/registered/{*}': 'renamed',
};

/** How often an operation comes up: the registered domain's writes most, then its reads. */
function weightOf(op: Operation): number {
  if (op.template.startsWith('/api/registered')) return ['POST', 'PUT', 'PATCH'].includes(op.method) ? 8 : 4;
  return op.template.startsWith('/api/') ? 2 : 1;
}

/** Scenarios: sequences of generated requests over every operation of the document. */
function scenarioArb(operations: readonly Operation[], maxSteps: number): fc.Arbitrary<RequestPlan[]> {
  const steps = operations.map((op) => ({ weight: weightOf(op), arbitrary: requestPlanArb(op) }));
  return fc.array(fc.oneof(...steps), { minLength: 1, maxLength: maxSteps });
}

/** Every string `PID` value in a JSON body (upload results and entity records). */
function pidsIn(ex: Exchange): string[] {
  if (!ex.response || !/json/.test(String(ex.response.headers['content-type']))) return [];
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'PID' && typeof x === 'string') found.push(x);
        else walk(x);
      }
    }
  };
  try {
    walk(JSON.parse(ex.response.body.toString('utf8')));
  } catch {
    // Not JSON after all: nothing to learn from it.
  }
  return found;
}

class Budget {
  readonly #start = Date.now();
  #failedAt: number | null = null;
  readonly #settings: FuzzSettings;
  constructor(settings: FuzzSettings) {
    this.#settings = settings;
  }
  get over(): boolean {
    const end = this.#failedAt === null ? this.#start + this.#settings.searchMs : this.#failedAt + this.#settings.shrinkMs;
    return Date.now() > end;
  }
  failed(): void {
    this.#failedAt ??= Date.now();
  }
}

/** One scenario: a sandbox, then the steps, each checked by `property`. */
class Scenario {
  readonly #target: FuzzTarget;
  readonly #property: FuzzProperty;
  readonly #budget: Budget;
  readonly #log: Exchange[] = [];
  readonly #state: ScenarioState;

  constructor(target: FuzzTarget, property: FuzzProperty, budget: Budget, sandbox: string) {
    this.#target = target;
    this.#property = property;
    this.#budget = budget;
    this.#state = { entities: [{ path: sandbox, kind: 'collection' }], pids: [] };
  }

  get requests(): number {
    return this.#log.length;
  }

  async #send(op: Operation, resolved: ResolvedRequest, label: string): Promise<Exchange> {
    if (this.#budget.over) throw new OutOfBudget();
    const ex = await send(this.#target.base, resolved.request, label, op.id);
    this.#log.push(ex);
    this.#state.pids.push(...pidsIn(ex).filter((p) => !this.#state.pids.includes(p)));
    return ex;
  }

  #fail(violation: string, shown: Exchange[]): never {
    const earlier = this.#log.filter((ex) => !shown.includes(ex)).map((ex) => `  ${ex.label}: ${ex.request.method} ${ex.request.target} → ${ex.response?.status ?? ex.error}`);
    throw new Violation([
      violation,
      '',
      ...shown.map((ex) => describeExchange(this.#target.base, ex)),
      ...(earlier.length ? ['', 'the other requests of this scenario:', ...earlier] : []),
    ].join('\n'));
  }

  #check(ex: Exchange, op: Operation, resolved: ResolvedRequest | null): void {
    const violation = this.#property.exchange?.(ex, op, resolved);
    if (violation) this.#fail(violation, [ex]);
  }

  #op(id: string): Operation {
    const op = this.#target.operations.find((o) => o.id === id);
    if (!op) throw new Error(`the document has no operation ${id}`);
    return op;
  }

  #get(urlPath: string): ResolvedRequest {
    return {
      request: { method: 'GET', target: urlPath, headers: { authorization: this.#target.creds.user }, body: null, redacted: { authorization: 'Bearer $ALICE_TOKEN' } },
      intent: null, renames: null, malformedBody: false,
    };
  }

  /**
   * Makes the sandbox collection the scenario works in (and the property's collection of
   * sandboxes, which keeps the home's listing short); any answer but 200 is a setup error.
   */
  async open(): Promise<void> {
    const sandbox = this.#state.entities[0]!.path;
    const create: ResolvedRequest = {
      request: {
        method: 'POST', target: '/api/registered', body: Buffer.from(JSON.stringify({ path: sandbox, force: true })),
        headers: { authorization: this.#target.creds.user, 'content-type': 'application/json' }, redacted: { authorization: 'Bearer $ALICE_TOKEN' },
      },
      intent: null, renames: null, malformedBody: false,
    };
    const ex = await this.#send(this.#op('POST /api/registered'), create, 'sandbox');
    if (ex.response?.status !== 200) throw new Error(`could not create the sandbox ${sandbox}:\n${describeExchange(this.#target.base, ex)}`);
  }

  async run(steps: readonly RequestPlan[]): Promise<void> {
    for (const [i, plan] of steps.entries()) {
      const op = this.#op(plan.operationId);
      const resolved = await resolvePlan(plan, op, this.#state, this.#target.creds);
      const ex = await this.#send(op, resolved, `step ${i + 1}`);
      this.#check(ex, op, resolved);
      const makes = MAKES_ENTITY[op.id];
      const status = ex.response?.status ?? 0;
      if (makes && status >= 200 && status < 300) await this.#followUp(ex, makes, resolved, `step ${i + 1}`);
    }
  }

  /** Reads what a 2xx create, upload or rename made, records it, and checks the property on it. */
  async #followUp(ex: Exchange, makes: 'collection' | 'dataobject' | 'renamed', resolved: ResolvedRequest, label: string): Promise<void> {
    const data = successData(ex)?.data as { path?: unknown; filename?: unknown } | null | undefined;
    if (!data || typeof data.path !== 'string') return; // the envelope and schema properties judge this
    const path = makes === 'collection' ? data.path : `${data.path === '/' ? '' : data.path}/${String(data.filename)}`;
    // NOTE: outside the user's home a create with force may answer 200 for a collection that
    // exists but the user may not read (mkdir -p semantics), so reads there prove nothing.
    const home = this.#target.home;
    if (path !== home && !path.startsWith(`${home}/`)) return;
    const stored = { parent: parentPathOf(path), name: path.slice(path.lastIndexOf('/') + 1) };
    const getOp = this.#op(GET_ENTITY);
    const metadata = await this.#send(getOp, this.#get(`/api/registered${encodeBackendPath(path)}`), `${label}, follow-up: GET of the accepted entity`);
    this.#check(metadata, getOp, null);
    const listing = await this.#send(getOp, this.#get(`/api/registered${encodeBackendPath(stored.parent)}/`), `${label}, follow-up: listing of its parent`);
    this.#check(listing, getOp, null);

    const renamedFrom = resolved.renames === null ? null : resolved.renames.slice(resolved.renames.lastIndexOf('/') + 1);
    const accepted: Accepted = { exchange: ex, requested: resolved.intent, stored, isDataObject: makes === 'dataobject', renamedFrom, metadata, listing };
    const violation = this.#property.accepted?.(accepted);
    if (violation) this.#fail(violation, [ex, metadata, listing]);
    this.#record(path, makes, resolved.renames);
  }

  #record(path: string, makes: 'collection' | 'dataobject' | 'renamed', renames: string | null): void {
    const entities = this.#state.entities;
    if (makes === 'renamed') {
      if (renames === null) return;
      for (const e of entities) {
        if (e.path === renames || e.path.startsWith(`${renames}/`)) e.path = path + e.path.slice(renames.length);
      }
      return;
    }
    // An upload may overwrite, and a create with force may find the collection already there.
    if (!entities.some((e) => e.path === path)) entities.push({ path, kind: makes });
  }
}

/**
 * Runs `property` over generated scenarios and returns how it went. A scenario cut by the
 * budget passes; shrinking gets `shrinkMs` from the first failure.
 */
export async function checkProperty(target: FuzzTarget, property: FuzzProperty, settings: FuzzSettings): Promise<PropertyOutcome> {
  const budget = new Budget(settings);
  const started = Date.now();
  let scenarios = 0;
  let requests = 0;
  const details = await fc.check(fc.asyncProperty(scenarioArb(target.operations, settings.maxSteps), async (steps) => {
    if (budget.over) return;
    const scenario = new Scenario(target, property, budget, `${target.home}/fuzz-${property.name}/${++sandboxes}`);
    try {
      await scenario.open();
      await scenario.run(steps);
      scenarios++;
    } catch (err) {
      if (err instanceof OutOfBudget) return;
      if (err instanceof Violation) budget.failed();
      throw err;
    } finally {
      requests += scenario.requests;
    }
  }), { seed: settings.seed, numRuns: settings.numRuns, ...(settings.path ? { path: settings.path } : {}) });
  const ms = Date.now() - started;
  if (!details.failed) return { scenarios, requests, ms, failure: null };
  const error = details.errorInstance;
  const replay = `LADING_FUZZ_SEED=${details.seed} LADING_FUZZ_PATH='${details.counterexamplePath}' node --disable-warning=ExperimentalWarning --test --test-name-pattern='${property.name}' test/fuzz/api-fuzz.test.ts`;
  const message = error instanceof Error ? error.message : String(error);
  const cut = message.indexOf('\n');
  const failure = [
    `fuzz property ${property.name} failed: ${error instanceof Violation ? '' : 'the scenario threw: '}${cut < 0 ? message : message.slice(0, cut)}`,
    `seed ${details.seed}, path '${details.counterexamplePath}' (failed at run ${details.numRuns}, ${details.numShrinks} shrinks)`,
    `replay: ${replay}`,
    ...(cut < 0 ? [] : [message.slice(cut)]),
  ].join('\n');
  return { scenarios, requests, ms, failure };
}
