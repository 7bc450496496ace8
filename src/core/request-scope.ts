/**
 * Where the request being served began, for the code it calls, however deep: a number from
 * one counter of the process, taken when the request arrived. A driver that remembers what it
 * read, and proves its memory current by a statement sent after a given moment (the
 * PostgreSQL catalog's barrier), may take one sent after the request's mark as proof for every
 * read of that request, instead of sending one per read. Outside a request, or in work a
 * request left running longer than `REQUEST_SCOPE_MS`, there is no mark.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** How long after its arrival a request's mark still stands for the work it started. */
export const REQUEST_SCOPE_MS = 1_000;

let counter = 0;
const scope = new AsyncLocalStorage<{ mark: number; at: number }>();

/** A number greater than every one taken before in this process. */
export function nextMark(): number {
  return ++counter;
}

/** Runs `fn` as a request that arrives now: `requestMark` in it (and what it calls) is taken now. */
export function runAsRequest<T>(fn: () => T): T {
  return scope.run({ mark: nextMark(), at: performance.now() }, fn);
}

/** The mark of the request being served, or undefined outside one (or past `REQUEST_SCOPE_MS`). */
export function requestMark(): number | undefined {
  const store = scope.getStore();
  return store && performance.now() - store.at <= REQUEST_SCOPE_MS ? store.mark : undefined;
}
