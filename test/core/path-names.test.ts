/**
 * The name rule of `core/path.ts`: which characters a new name may not hold, the message that
 * names the refused character, and names stored before the rule staying addressable.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLadingError } from '../../src/core/errors.ts';
import { REFUSED_IN_NAMES, STORED_NAME_PATTERN, parseName, parseNewPath, parsePath, parseUrlPath } from '../../src/core/path.ts';

const refused = (name: string, message: RegExp) => assert.throws(() => parseName(name), (err: unknown) => {
  assert.ok(isLadingError(err, 'INVALID_PATH'), String(err));
  assert.match((err as Error).message, message);
  return true;
});

describe('the name rule', () => {
  it('refuses C0 and C1 controls, DELETE, line and paragraph separators, bidirectional controls and U+FEFF, naming the character', () => {
    refused('a\u202Etxt.exe', /^U\+202E RIGHT-TO-LEFT OVERRIDE is not allowed in a name\.$/);
    refused('a\u2028b', /U\+2028 LINE SEPARATOR/);
    refused('a\u2029b', /U\+2029 PARAGRAPH SEPARATOR/);
    refused('a\u009Bb', /U\+009B \(a C1 control character\)/);
    refused('a\u0085b', /U\+0085/);
    refused('\uFEFFa', /U\+FEFF ZERO WIDTH NO-BREAK SPACE/);
    refused('a\u0000b', /U\+0000 NULL/);
    refused('a\nb', /U\+000A LINE FEED/);
    refused('a\u007Fb', /U\+007F DELETE/);
    for (const c of ['\u202A', '\u202B', '\u202C', '\u202D', '\u2066', '\u2067', '\u2068', '\u2069']) refused(`a${c}b`, /is not allowed in a name/);
  });

  it('accepts ordinary names in any script', () => {
    for (const name of ['data.csv', 'résumé', 'данные', 'データ', 'a b', 'emoji-😀', 'x\u00A0y', 'ﬁ']) assert.equal(parseName(name), name);
  });

  it('lets a path address names stored before the rule, but refuses them as new names', () => {
    const legacy = '/z/home/alice/old\u2028name';
    assert.equal(parsePath(legacy), legacy);
    assert.equal(parseUrlPath(`/z/home/alice/${encodeURIComponent('old\u202Ename')}`), '/z/home/alice/old\u202Ename');
    assert.throws(() => parseNewPath(parsePath(legacy)), /U\+2028 LINE SEPARATOR/);
    assert.equal(parseNewPath(parsePath('/z/home/old\u2028dir/new.txt')), '/z/home/old\u2028dir/new.txt', 'only the new name is checked');
    assert.throws(() => parseNewPath(parsePath('/z/home/old\u2028dir/new'), Infinity), /U\+2028/);
    assert.throws(() => parsePath('/z/a\u0001b'), /U\+0001/, 'C0 controls were never accepted, so never addressable');
  });

  it('derives the stored-name pattern of response schemas from the same rule', () => {
    const pattern = new RegExp(STORED_NAME_PATTERN, 'u');
    for (const name of ['data.csv', 'old\u2028name', 'a\u202Eb', '\u009B']) assert.ok(pattern.test(name), JSON.stringify(name));
    for (const name of ['', 'a/b', 'a\nb', 'a\u0000', 'a\u007F']) assert.ok(!pattern.test(name), JSON.stringify(name));
    assert.match(REFUSED_IN_NAMES, /U\+0000–U\+001F/);
    assert.match(REFUSED_IN_NAMES, /U\+202E/);
    assert.match(REFUSED_IN_NAMES, /U\+FEFF/);
  });
});
