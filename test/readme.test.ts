/**
 * The README is part of the product: its curl session runs as shown against a fresh server,
 * and its configuration and error tables list every key and every error code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_KEYS } from '../src/wiring/config.ts';
import { ERROR_CODES } from '../src/core/errors.ts';
import type { Path } from '../src/core/path.ts';
import { startTestServer } from './helpers/server.ts';

/**
 * The documentation, in the order its curl session runs: the README's first session, then the
 * API guide, then the researchers' guide (sharing, landing pages), then the operators' guide.
 */
export const DOCS = ['README.md', 'docs/api.md', 'docs/researchers.md', 'docs/operators.md'];
const readme = (await Promise.all(DOCS.map((f) => readFile(new URL(`../${f}`, import.meta.url), 'utf8')))).join('\n');

describe('README', () => {
  it('its curl session runs as shown against `lading serve`', async () => {
    // NOTE: the session starts in the block marked `begin`; blocks marked `continue` (in later
    // sections) go on in the same shell, in the order they appear.
    const blocks = [...readme.matchAll(/<!-- readme-example: (begin|continue) -->\s*```bash\n([\s\S]*?)```\s*<!-- readme-example: end -->/g)];
    assert.equal(blocks[0]?.[1], 'begin', 'the README has a marked example block, and it comes first');
    const script = blocks.map((b) => b[2]!).join('\n');
    assert.match(script, /^LADING=http:\/\/127\.0\.0\.1:8080$/m);
    // NOTE: with the example rules, so the sections on publishing and landing pages have PIDs.
    const s = await startTestServer({ zone: 'lading', 'pid.rules': fileURLToPath(new URL('../examples/rules.txt', import.meta.url)) });
    const cwd = await mkdtemp(join(tmpdir(), 'lading-readme-'));
    try {
      await s.addUser('alice', 'secret');
      await s.addUser('bob', 'secret-bob');
      // NOTE: asynchronous, since the server answering the script runs in this process.
      const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('bash', ['-euo', 'pipefail', '-c', script.replace(/^LADING=.*$/m, `LADING=${s.url}`)], { cwd, timeout: 60_000 });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c) => { stdout += String(c); });
        child.stderr.on('data', (c) => { stderr += String(c); });
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
      assert.equal(run.status, 0, `the example failed:\n${run.stdout}\n${run.stderr}`);
      const out = run.stdout;
      assert.match(out, /"Server is alive"/);
      assert.match(out, /"filename":"sample.csv"/);
      assert.match(out, /"filename":"checked.csv"/);
      assert.match(out, /"object_type":"dataobject"/);
      assert.match(out, /temperature/);
      assert.match(out, /"path":"\/lading\/home\/alice\/campaign-2026"/);
      assert.match(out, /"filename":"campaign-2026-final"/);
      assert.match(out, /"Method not allowed"/);
      assert.match(out, /"Completed":"Current proxy is still valid."/);
      // API tokens: listed with their label (never the token), revoked, then refused.
      assert.match(out, /"label":"nightly sync"[^}]*"current":true/);
      assert.match(out, /"Completed":"The token was revoked."\},"errors":null\}\}401$/m);
      assert.equal(await readFile(join(cwd, 'copy.csv'), 'utf8'), 'temperature,depth\n');
      // Sharing: a download and a member through links, a listing with relative paths, two
      // deposits into a drop box, the links listed, and a revoked link refused.
      assert.equal(await readFile(join(cwd, 'shared.csv'), 'utf8'), 'temperature,depth\n');
      assert.equal(await readFile(join(cwd, 'member.csv'), 'utf8'), 'temperature,depth\n');
      assert.match(out, /"name":"sample.csv","kind":"dataobject","size":18,[^}]*"path":"\/sample.csv"/);
      assert.match(out, /"filename":"sample.csv","size":18/);
      assert.match(out, /"filename":"copy.csv","size":18/);
      assert.match(out, /"kind":"read","path":"\/lading\/home\/alice\/sample.csv","creator":"alice"/);
      assert.match(out, /"kind":"upload","path":"\/lading\/home\/alice\/campaign-2026-final"/);
      assert.match(out, /"Not found":"No such link/);
      assert.match(await readFile(join(cwd, 'openapi.json'), 'utf8'), /"openapi":"3/);
      // Access control, metadata, publishing and landing pages.
      assert.match(out, /"owner":"alice","entries":\[\{"principal":"alice","level":"own"\}\]/);
      assert.match(out, /"principal":"bob","level":"read"/);
      assert.match(out, /bob lists it: 200\n\{"Meta":\{[^}]*"truncated":false\},"Response":\{"data":\[\{"campaign-2026-final":\{[^\n]*"access":"read"\}\}\][^\n]*"entries":\[\{"principal":"alice","level":"own"\}\][^\n]*bob lists it: 403/);
      assert.match(out, /"attribute":"depth","value":"1200","unit":"m"/);
      assert.match(out, /"Forbidden":"The attribute 'PID' is written by the backend's PID rules/);
      assert.match(out, /"published":true,"via":"\/lading\/home\/alice\/campaign-2026-final"/);
      assert.match(out, /"published_by":"alice"/);
      assert.match(out, /"link":"[^"]*\/api\/public\/lading\/home\/alice\/campaign-2026-final\/cast-01\.csv"/);
      assert.match(out, /"EUDAT\/ROR":"21\.T99999\//);
      assert.match(out, /public download: 404/);
      const landing = await readFile(join(cwd, 'landing.html'), 'utf8');
      assert.match(landing, /^<!DOCTYPE html>/);
      assert.match(landing, /cast-01\.csv/);
      assert.match(landing, /Download cast-01\.csv/, 'published when the page was fetched');
      // The record pointed at the public URL while published, and points back once the jobs ran.
      const pid = /<code id="pid"[^>]*>([^<]+)<\/code>/.exec(landing)![1]!;
      for (let i = 0; i < 100 && (await s.deps.pids.resolve(pid))?.URL?.includes('/api/public/'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await s.deps.pids.resolve(pid))?.URL, `${s.url}/api/registered/lading/home/alice/campaign-2026-final/cast-01.csv`);
      // Resumable uploads: the offset between the pieces, the object it became, and its bytes.
      assert.match(out, /upload-offset: 10\r?\n/i);
      assert.match(out, /content-location: http:\/\/127\.0\.0\.1:\d+\/api\/registered\/lading\/home\/alice\/profile\.csv\r?\n/i);
      assert.match(out, /"state":"complete","offset":23,"length":23/);
      assert.match(out, /"dataobject":"profile\.csv"/);
      const stored = await s.deps.catalog.getEntity('/lading/home/alice/profile.csv' as Path);
      assert.equal(stored?.kind === 'dataobject' && stored.checksum, `sha2:${createHash('sha256').update('depth,salinity\n10,35.1\n').digest('base64')}`);
    } finally {
      await s.stop();
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('documents every configuration key with its environment variable', () => {
    for (const { key } of CONFIG_KEYS) {
      const env = 'LADING_' + key.replace(/\./g, '_').toUpperCase();
      assert.ok(readme.includes(`| \`${key}\` | \`${env}\` |`), `README lacks the configuration key ${key}`);
    }
  });

  it('documents every error code', () => {
    for (const code of ERROR_CODES) assert.ok(readme.includes(`| \`${code}\` |`), `README lacks the error code ${code}`);
  });
});
