/**
 * V8's `gc` for tests, exposed as the reclaimer exposes it (`src/wiring/reclaimer.ts`), so that
 * the suite needs no `--expose-gc`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');

/** A full collection now (`last-resort`: until nothing more dies, giving the heap's pages back). */
export const gc = runInNewContext('gc') as (options: { type: 'major'; flavor?: 'regular' | 'last-resort' }) => void;
