/**
 * Property tests of the one path parser: whatever a client sends, the result is either a
 * clean absolute path or an INVALID_PATH error — never a traversal, never another error.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isLadingError } from '../../src/core/errors.ts';
import { parseName, parsePath, parseUrlPath, lineage, parentOf, baseName, childOf } from '../../src/core/path.ts';

function assertClean(path: string): void {
  assert.ok(path.startsWith('/'));
  if (path === '/') return;
  assert.ok(!path.endsWith('/'));
  for (const seg of path.slice(1).split('/')) {
    assert.ok(seg.length > 0, 'no empty segment');
    assert.ok(seg !== '.' && seg !== '..', 'no dot segment');
    assert.ok(!/[\u0000-\u001f\u007f]/.test(seg), 'no control character');
    assert.ok(seg.isWellFormed());
    assert.ok(Buffer.byteLength(seg) <= 255);
  }
}

/** Runs `parse` and checks it either returns a clean path or throws INVALID_PATH. */
function outcome(parse: () => string): string | null {
  try {
    const out = parse();
    assertClean(out);
    return out;
  } catch (err) {
    assert.ok(isLadingError(err, 'INVALID_PATH'), `unexpected error ${String(err)}`);
    return null;
  }
}

const hostile = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.array(fc.constantFrom('/', '.', '..', '%2e', '%2E', '%2f', '%2F', '%00', '%', '%c0%ae', '%ff', 'a', 'é', '\u0000', '\n', '\ud800', '//', '%25'), { maxLength: 20 }).map((a) => a.join('')),
);

describe('path parser properties', () => {
  it('parsePath returns a clean path or INVALID_PATH for any string', () => {
    fc.assert(fc.property(hostile, (s) => { outcome(() => parsePath('/' + s)); }), { numRuns: 3000 });
  });

  it('parseUrlPath returns a clean path or INVALID_PATH for any URL text', () => {
    fc.assert(fc.property(hostile, (s) => { outcome(() => parseUrlPath('/' + s)); }), { numRuns: 3000 });
  });

  it('a parsed path parses to itself again (idempotent cleaning)', () => {
    fc.assert(fc.property(hostile, (s) => {
      const once = outcome(() => parsePath('/' + s));
      if (once !== null) assert.equal(parsePath(once), once);
    }), { numRuns: 2000 });
  });

  const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((n) => {
    try { parseName(n); return true; } catch { return false; }
  });

  it('percent-encoding valid names round-trips through parseUrlPath', () => {
    fc.assert(fc.property(fc.array(name, { minLength: 1, maxLength: 6 }), (names) => {
      const encoded = '/' + names.map(encodeURIComponent).join('/');
      assert.equal(parseUrlPath(encoded), '/' + names.join('/'));
    }), { numRuns: 1000 });
  });

  it('an encoded slash or dot-dot inside a segment never becomes a separator or a step up', () => {
    fc.assert(fc.property(fc.array(name, { minLength: 1, maxLength: 4 }), fc.constantFrom('%2F', '%2f', '%2e%2e', '..', '%2E.'), (names, evil) => {
      const path = outcome(() => parseUrlPath('/' + names.map(encodeURIComponent).join('/') + '/' + evil + '/x'));
      assert.equal(path, null);
    }), { numRuns: 500 });
  });

  it('parent, base name, child and lineage agree', () => {
    fc.assert(fc.property(fc.array(name, { minLength: 1, maxLength: 6 }), (names) => {
      const path = parsePath('/' + names.join('/'));
      assert.equal(childOf(parentOf(path), baseName(path)), path);
      const chain = lineage(path);
      assert.equal(chain[0], '/');
      assert.equal(chain.at(-1), path);
      assert.equal(chain.length, names.length + 1);
    }), { numRuns: 500 });
  });
});
