/**
 * Turns the configuration's `pid.*` keys into the rules and the PID provider: loads the rules
 * file and creates the embedded or Handle REST provider with its options. The only place that
 * knows those keys' meaning; a mistake stops the start with a `ConfigError` that names the key
 * or the rules file's line, and never a password.
 */
import { readFile } from 'node:fs/promises';
import { type Config, ConfigError } from './config.ts';
import { secretSetting } from './secret-file.ts';
import { RuleSet, RulesError, parseRules } from '../core/rules.ts';
import type { Catalog, Clock, PidProvider } from '../core/ports.ts';
import { createEmbeddedPidProvider } from '../drivers/pid/embedded.ts';
import { createHandleRestProvider } from '../drivers/pid/handle-rest.ts';
import { type PidOption, PidOptionError } from '../drivers/pid/options.ts';

/** The rules `pid.rules` names, or none. `ConfigError` when the file cannot be read or parsed. */
export async function loadRules(config: Config): Promise<RuleSet> {
  const file = config.pid.rules;
  if (!file) return RuleSet.empty;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`pid.rules: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  try {
    return parseRules(text, file);
  } catch (err) {
    if (err instanceof RulesError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The configuration key behind each option of the PID providers. */
const KEY_OF_OPTION: Record<PidOption, string> = {
  prefix: 'pid.prefix',
  baseUrl: 'pid.handle_url',
  username: 'pid.handle_user',
  password: 'pid.handle_password_file (or LADING_PID_HANDLE_PASSWORD)',
};

/**
 * Creates the configured PID provider. Rejects with `ConfigError` naming the key when the
 * provider refuses an option (an empty prefix or one with '/', a missing or non-URL
 * `pid.handle_url`, a missing user or password) or the password file cannot be read.
 */
export async function openPidProvider(config: Config, catalog: Catalog, clock: Clock): Promise<PidProvider> {
  const p = config.pid;
  try {
    if (p.provider === 'embedded') return createEmbeddedPidProvider({ catalog, clock, prefix: p.prefix });
    const password = await secretSetting({ fileKey: 'pid.handle_password_file', file: p.handle_password_file, value: p.handle_password });
    return createHandleRestProvider({ baseUrl: p.handle_url ?? '', prefix: p.prefix, username: p.handle_user ?? '', password: password ?? '' });
  } catch (err) {
    if (!(err instanceof PidOptionError)) throw err;
    throw new ConfigError(`${KEY_OF_OPTION[err.option]} ${err.problem} (pid.provider is ${p.provider}).`, { cause: err });
  }
}
