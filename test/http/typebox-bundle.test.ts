/**
 * TypeBox comes from the one-file bundle `npm install`/`npm ci` make (the `postinstall` script,
 * `scripts/bundle-typebox.mjs`), which builds the same schemas as the package, and no module
 * loads the package's values behind the bundle's back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import * as Package from '@sinclair/typebox';
import { KindGuard, Type, TYPEBOX_SOURCE, bundlePath } from '../../src/http/typebox.ts';

const root = resolve(import.meta.dirname, '..', '..');

describe('TypeBox from its bundle', () => {
  it('is loaded from the bundle the install made for the installed version', () => {
    assert.ok(existsSync(bundlePath()), `no ${relative(root, bundlePath())}: run npm ci (its postinstall script makes it)`);
    assert.equal(TYPEBOX_SOURCE, 'bundle');
    assert.notEqual(Type, Package.Type, 'a copy of its own, not the package\'s');
  });

  it('builds the same schemas as the package, TypeBox\'s symbols included', () => {
    const build = (T: typeof Package.Type) => T.Object({
      path: T.String({ minLength: 1, description: 'a path' }),
      size: T.Optional(T.Integer({ minimum: 0 })),
      kind: T.Union([T.Literal('read'), T.Literal('upload')]),
      tags: T.Array(T.String(), { maxItems: 3 }),
      extra: T.Record(T.String(), T.Unknown()),
      when: T.Union([T.String({ format: 'date-time' }), T.Null()]),
    }, { additionalProperties: false });
    const ours = build(Type);
    assert.deepStrictEqual(ours, build(Package.Type));
    assert.ok(Object.getOwnPropertySymbols(ours).length > 0, 'the schema carries TypeBox\'s Kind symbol');
    assert.equal(KindGuard.IsObject(ours), true);
    assert.equal(Package.KindGuard.IsObject(ours), true, 'the package recognises the bundle\'s schemas');
  });

  it('is the only module that loads TypeBox\'s values; the others import its types only', async () => {
    const offenders: string[] = [];
    const files = (await readdir(join(root, 'src'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
    for (const file of files) {
      if (file.endsWith(join('http', 'typebox.ts'))) continue;
      for (const m of (await readFile(file, 'utf8')).matchAll(/^import\s+(?!type\b)[^;]*from\s+'@sinclair\/typebox'/gm)) offenders.push(`${relative(root, file)}: ${m[0]}`);
    }
    assert.deepEqual(offenders, []);
  });
});
