/**
 * What the catalog contract suites share: the driver under test as they receive it, the shape
 * of a suite, and the assertion by error code. No test cases live here.
 */
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ErrorCode } from '../../src/core/errors.ts';

/** A catalog driver under test: its name for the report, and a factory of fresh, empty catalogs. */
export interface CatalogTarget {
  name: string;
  create(): Promise<Catalog>;
}

/** A contract suite of one catalog role: registers its `describe` block for `target`. */
export type ContractSuite = (target: CatalogTarget) => void;

/** Asserts that `promise` rejects with an error whose `code` is `code` (messages are not the contract). */
export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (err: { code?: string }) => {
    assert.equal(err.code, code);
    return true;
  });
}
