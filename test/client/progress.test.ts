/**
 * The figures `lading put` and `get` show: one formatter for every byte count and rate
 * (rounded, never "39.603960396039604 B/s", never negative), and the rate over a sliding window
 * of the bytes moved — known before the first progress line, not lowered by a transfer cut off
 * by Ctrl-C, not raised by the bytes a resumed transfer found there.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytes, formatElapsed, formatRate, LineReporter, Totals } from '../../src/client/transfer/progress.ts';
import { Writable } from 'node:stream';

describe('the figures of the progress display', () => {
  it('formats bytes with at most three significant digits, and nothing odd as 0 B', () => {
    const cases: [number, string][] = [
      [0, '0 B'], [39.603960396039604, '40 B'], [1023, '1023 B'], [1023.6, '1.00 KiB'], [1024, '1.00 KiB'], [1536, '1.50 KiB'],
      [10 * 1024 - 1, '10.0 KiB'], [99.96 * 1024, '100 KiB'], [1023.9 * 1024, '1.00 MiB'], [32 * 1024 ** 2, '32.0 MiB'],
      [1.5 * 1024 ** 3, '1.50 GiB'], [-1809970.08, '0 B'], [Number.NaN, '0 B'], [Number.POSITIVE_INFINITY, '0 B'],
    ];
    for (const [n, text] of cases) assert.equal(formatBytes(n), text, String(n));
    assert.equal(formatRate(39.603960396039604), '40 B/s');
    assert.equal(formatElapsed(0.04), '0.0 s');
    assert.equal(formatElapsed(9.96), '10 s');
    assert.equal(formatElapsed(125), '2:05');
  });

  it('the rate is over the last five seconds of bytes moved, known before the first line', () => {
    let now = 1_000_000;
    const totals = new Totals(() => now);
    const a = { name: 'a', size: 100 * 1024 ** 2, done: 0 };
    totals.active.set(1, a);
    // 1 MiB every 100 ms for 3 s: 10 MiB/s, whenever it is asked.
    for (let i = 1; i <= 30; i++) {
      now += 100;
      totals.advance(a, i * 1024 ** 2);
    }
    assert.ok(Math.abs(totals.rate() - 10 * 1024 ** 2) < 0.05 * 10 * 1024 ** 2, `${totals.rate()}`);
    // Then 2 MiB/s for 10 s: the window has forgotten the faster start.
    for (let i = 1; i <= 100; i++) {
      now += 100;
      totals.advance(a, 30 * 1024 ** 2 + i * 0.2 * 1024 ** 2);
    }
    assert.ok(Math.abs(totals.rate() - 2 * 1024 ** 2) < 0.1 * 2 * 1024 ** 2, `${totals.rate()}`);
    // A retry goes back to the start of its request: not negative, not lower than moved.
    const moved = totals.moved;
    totals.advance(a, 0);
    now += 100;
    assert.equal(totals.moved, moved);
    assert.ok(totals.rate() > 0);
    // Stalled for ten seconds: 0, never below.
    now += 10_000;
    assert.equal(totals.rate(), 0);
  });

  it('Ctrl-C and resumed bytes: the summary rate stays what moved', () => {
    let text = '';
    const out = new Writable({ write(chunk, _enc, done) { text += String(chunk); done(); } });
    const reporter = new LineReporter('sent', 60_000, out);
    reporter.plan(2, 200);
    reporter.start(0, 'a', 100);
    reporter.base(0, 60);
    reporter.bytes(0, 80);
    reporter.start(1, 'b', 100);
    reporter.bytes(1, 50);
    reporter.abandoned(0);
    reporter.abandoned(1);
    reporter.finish(true);
    assert.match(text, /^lading: sent 0 files \(70 B\) in \d+\.\d s, [\d.]+ (B|KiB)\/s; 2 cut off\n$/);
    assert.doesNotMatch(text, /-\d/);
  });
});
