/**
 * What the PID provider factories share about their options: the error they throw, naming
 * the option, when one is missing or unusable, and the rule for a handle prefix. Knows nothing
 * of the configuration; the composition root maps options to configuration keys.
 */

/** The options a PID provider may refuse. */
export type PidOption = 'prefix' | 'baseUrl' | 'username' | 'password';

/** A missing or unusable option of a PID provider, thrown when the provider is created. */
export class PidOptionError extends Error {
  override name = 'PidOptionError';
  /** The option's name in the factory's options (`prefix`, `baseUrl`, …). */
  readonly option: PidOption;
  /** What is wrong with it, e.g. `is required`; never the value itself. */
  readonly problem: string;

  constructor(provider: string, option: PidOption, problem: string) {
    super(`${provider}: option \`${option}\` ${problem}`);
    this.option = option;
    this.problem = problem;
  }
}

/** Throws `PidOptionError` for an empty prefix or one containing '/' (handles are `<prefix>/<suffix>`). */
export function checkPrefix(provider: string, prefix: string): void {
  if (!prefix) throw new PidOptionError(provider, 'prefix', 'is required');
  if (prefix.includes('/')) throw new PidOptionError(provider, 'prefix', 'must not contain \'/\'');
}
