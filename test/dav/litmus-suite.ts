/**
 * The litmus WebDAV suite (Debian's `litmus`: groups basic, copymove, props, locks and http)
 * run against `/dav` of a whole node, as a user with an API token for a password. Every test
 * litmus reports as failed fails this test, except those in `EXPECTED_FAILURES` (none), and
 * each group must report its summary. Run by `litmus.test.ts` (SQLite, files) and
 * `litmus-postgres-s3.test.ts`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export const LITMUS_GROUPS = ['basic', 'copymove', 'props', 'locks', 'http'] as const;

/** Tests litmus may fail by design, by `group/name`, with why. None. */
const EXPECTED_FAILURES = new Map<string, string>();

/** One test's outcome as litmus printed it. */
export interface LitmusResult {
  group: string;
  name: string;
  outcome: string;
}

/**
 * Parses litmus's output: each test's line (`<n>. <name>.... pass`, `FAIL (why)`, `SKIPPED`,
 * `WARNING: …`, progress rewritten after carriage returns) and each group's summary line.
 */
export function parseLitmus(output: string): { results: LitmusResult[]; summaries: Map<string, string> } {
  const results: LitmusResult[] = [];
  const summaries = new Map<string, string>();
  let group = '';
  for (const raw of output.split('\n')) {
    const line = raw.split('\r').filter((p) => p.trim() !== '').at(-1) ?? '';
    const start = /^-> running `([^']+)':/.exec(line);
    if (start) {
      group = start[1]!;
      continue;
    }
    const summary = /^<- summary for `([^']+)': (.*)$/.exec(line);
    if (summary) {
      summaries.set(summary[1]!, summary[2]!);
      continue;
    }
    const test = /^\s*\d+\.\s+(\S+?)\.*\s+(pass|FAIL.*|SKIPPED.*|WARNING.*)$/.exec(line);
    if (test) results.push({ group, name: test[1]!, outcome: test[2]! });
  }
  return { results, summaries };
}

/** Runs litmus against `url` as `user` with `password`, in a fresh directory (it writes debug.log there). */
export async function runLitmus(url: string, user: string, password: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lading-litmus-'));
  try {
    const child = spawn('litmus', ['--keep-going', url, user, password], {
      cwd: dir, env: { ...process.env, TESTS: LITMUS_GROUPS.join(' ') }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString('utf8'); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString('utf8'); });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    return `${output}\n(litmus exited with ${code})`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The suite on a node started with `flags`; `cleanup` runs after it stopped. */
export function litmusSuite(name: string, flags: Record<string, unknown>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`litmus against /dav: ${name}`, () => {
    let s: TestServer;
    let token: string;
    before(async () => {
      s = await startTestServer(flags);
      await s.addUser('litmus');
      token = await s.login('litmus');
    });
    after(async () => {
      await s?.stop();
      await cleanup();
    });

    it('passes every test of the basic, copymove, props, locks and http groups', { timeout: 300_000 }, async () => {
      const output = await runLitmus(`${s.url}/dav/${s.zone}/home/litmus/`, 'litmus', token);
      const { results, summaries } = parseLitmus(output);
      for (const group of LITMUS_GROUPS) assert.ok(summaries.has(group), `litmus ran the group ${group}:\n${output}`);
      assert.ok(results.length >= 100, `litmus reported its tests (${results.length}):\n${output}`);
      const failed = results.filter((r) => r.outcome !== 'pass' && !EXPECTED_FAILURES.has(`${r.group}/${r.name}`));
      assert.deepEqual(failed, [], `litmus output:\n${output}`);
    });
  });
}
