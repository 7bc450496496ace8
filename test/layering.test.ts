/**
 * The direction of dependencies: the core imports nothing but itself and Node; the identity
 * room goes one way (secrets ← x509 ← sessions ← oidc); the core and the identity code never
 * import `src/http`; and routes take their request types from their schemas, never by a cast.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** The repository-relative files a module imports (static and dynamic imports of relative paths). */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((s) => relative(root, resolve(dirname(file), s)));
}

describe('layering', () => {
  for (const area of ['src/core', 'src/identity']) {
    it(`nothing in ${area} imports src/http`, async () => {
      const offenders: string[] = [];
      for (const file of await sources(area)) {
        for (const target of importsOf(file, await readFile(file, 'utf8'))) {
          if (target.startsWith('src/http/')) offenders.push(`${relative(root, file)} → ${target}`);
        }
      }
      assert.deepEqual(offenders, []);
    });
  }

  it('the core imports only itself and node: modules', async () => {
    const offenders: string[] = [];
    for (const file of await sources('src/core')) {
      const text = await readFile(file, 'utf8');
      for (const target of importsOf(file, text)) if (!target.startsWith('src/core/')) offenders.push(`${relative(root, file)} → ${target}`);
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'([^.'][^']*)'/g)) {
        if (!m[1]!.startsWith('node:')) offenders.push(`${relative(root, file)} → ${m[1]}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('the identity room depends one way: secrets ← x509 ← sessions ← oidc', async () => {
    const rank: Record<string, number> = { secrets: 0, x509: 1, sessions: 2, oidc: 3 };
    const roomOf = (path: string) => /^src\/identity\/([^/]+)\//.exec(path)?.[1];
    const offenders: string[] = [];
    for (const file of await sources('src/identity')) {
      const from = roomOf(relative(root, file))!;
      assert.ok(from in rank, `${relative(root, file)} is in a known part of the identity room`);
      for (const target of importsOf(file, await readFile(file, 'utf8'))) {
        const to = roomOf(target);
        if (target.startsWith('src/identity/') && (to === undefined || rank[to]! > rank[from]!)) offenders.push(`${relative(root, file)} → ${target}`);
        if (!target.startsWith('src/identity/') && !target.startsWith('src/core/')) offenders.push(`${relative(root, file)} → ${target}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('no route casts its request\'s query, params or body', async () => {
    const offenders: string[] = [];
    for (const file of await sources('src/http')) {
      const text = await readFile(file, 'utf8');
      // `request.body as T`, `(request.body ?? {}) as T`, `request.query.x as T` and `<T>request.body`.
      const casts = /request\.(?:query|body|params)\b[\w.?]*(?:\s*\?\?\s*[^)\s]+)?\)?\s+as\s|<[^<>]+>\s*\(?\s*request\.(?:query|body|params)\b/g;
      for (const m of text.matchAll(casts)) offenders.push(`${relative(root, file)}: ${m[0]}`);
    }
    assert.deepEqual(offenders, []);
  });
});
