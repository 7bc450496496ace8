import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseRules, RulesError } from '../../src/core/rules.ts';
import { parsePath } from '../../src/core/path.ts';

describe('rules', () => {
  it('parses the example rules file', async () => {
    const rules = parseRules(await readFile(new URL('../../examples/rules.txt', import.meta.url), 'utf8'));
    assert.equal(rules.rules.length, 10);
    assert.deepEqual(rules.actionsFor({ type: 'entity.published', path: parsePath('/lading/home/alice/a') }), ['pid.update']);
    assert.deepEqual(rules.actionsFor({ type: 'entity.unpublished', path: parsePath('/lading/home/alice/a/b.csv') }), ['pid.update']);
    assert.deepEqual(rules.actionsFor({ type: 'object.created', path: parsePath('/lading/home/alice/a/b.csv') }), ['pid.register']);
    assert.deepEqual(rules.actionsFor({ type: 'object.created', path: parsePath('/other/home/alice/b.csv') }), []);
    assert.deepEqual(rules.actionsFor({ type: 'collection.created', path: parsePath('/lading/home/alice/a') }), []);
    for (const type of ['entity.trashed', 'entity.restored', 'entity.purged', 'entity.taken_down'] as const) {
      assert.deepEqual(rules.actionsFor({ type, path: parsePath('/lading/home/alice/a/b.csv') }), ['pid.update'], `${type} updates the record`);
    }
  });

  it('matches * within one segment and ** across any number of them', () => {
    const rules = parseRules([
      'object.created /z/home/*/raw/*.nc pid.register',
      'object.created /z/projects/**/final/** pid.update',
    ].join('\n'));
    const m = (p: string) => rules.actionsFor({ type: 'object.created', path: parsePath(p) });
    assert.deepEqual(m('/z/home/alice/raw/x.nc'), ['pid.register']);
    assert.deepEqual(m('/z/home/alice/raw/sub/x.nc'), []);
    assert.deepEqual(m('/z/home/alice/raw/x.csv'), []);
    assert.deepEqual(m('/z/projects/final/a'), ['pid.update']);
    assert.deepEqual(m('/z/projects/p1/p2/final/a/b'), ['pid.update']);
    assert.deepEqual(m('/z/projects/p1/finalx/a'), []);
    assert.deepEqual(m('/z/projects/p1/final'), ['pid.update'], 'a trailing ** matches zero segments');
  });

  it('treats pattern characters literally apart from * and **', () => {
    const rules = parseRules('object.created /z/a.b/(x)+ pid.register');
    assert.deepEqual(rules.actionsFor({ type: 'object.created', path: parsePath('/z/a.b/(x)+') }), ['pid.register']);
    assert.deepEqual(rules.actionsFor({ type: 'object.created', path: parsePath('/z/aXb/(x)+') }), []);
  });

  it('names the line of every mistake', () => {
    const cases: [string, RegExp][] = [
      ['# ok\nobject.created /z/** pid.register\nobject.made /z/** pid.register', /line 3: unknown event 'object.made'/],
      ['object.created /z/** pid.delete', /line 1: unknown action 'pid.delete'/],
      ['\n\nobject.created /z/**', /line 3: expected '<event> <path pattern> <action>'/],
      ['object.created z/** pid.register', /line 1: the path pattern 'z\/\*\*' must be absolute/],
      ['object.created /z/a**b pid.register', /line 1: '\*\*' must be a whole segment/],
    ];
    for (const [text, message] of cases) {
      assert.throws(() => parseRules(text, 'rules.txt'), (err: Error) => err instanceof RulesError && message.test(err.message) && err.message.startsWith('rules.txt'));
    }
  });

  it('an empty file or only comments means no rules', () => {
    assert.equal(parseRules('# nothing\n\n   \n').rules.length, 0);
  });
});
