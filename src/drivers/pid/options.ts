/**
 * What the PID provider factories share about their options: the error they throw, naming
 * the option, when one is missing or unusable, and the rule for a handle prefix. Knows nothing
 * of the configuration; the composition root maps options to configuration keys.
 */
import { DriverOptionError } from '../option-error.ts';

/** The options a PID provider may refuse. */
export type PidOption = 'prefix' | 'baseUrl' | 'username' | 'password';

/** A missing or unusable option of a PID provider, thrown when the provider is created. */
export class PidOptionError extends DriverOptionError<PidOption> {
  override name = 'PidOptionError';
}

/** Throws `PidOptionError` for an empty prefix or one containing '/' (handles are `<prefix>/<suffix>`). */
export function checkPrefix(provider: string, prefix: string): void {
  if (!prefix) throw new PidOptionError(provider, 'prefix', 'is required');
  if (prefix.includes('/')) throw new PidOptionError(provider, 'prefix', 'must not contain \'/\'');
}
