/**
 * The errors an operator can act on: what `lading` prints as one line (never a stack) and the
 * exit code it uses. Carries no secret; it must not wrap an error whose message could hold one.
 */

/**
 * A failure the operator can fix, with a message that names what to fix (the key, the file,
 * the address). Exit code 1; `ConfigError` (a configuration mistake) is the exit-code-2 kind.
 */
export class OperatorError extends Error {
  override name = 'OperatorError';
  /** 2 for a configuration mistake, 1 for anything else. */
  readonly exitCode: 1 | 2 = 1;
}
