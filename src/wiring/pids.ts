/**
 * Chooses the PID provider and loads the rules file from the configuration. The only place
 * that knows the `pid.*` keys' meaning; a mistake stops the start with a `ConfigError` that
 * names the key or the rules file's line.
 */
import { readFile } from 'node:fs/promises';
import { type Config, ConfigError } from './config.ts';
import { RuleSet, RulesError, parseRules } from '../core/rules.ts';
import type { Catalog, Clock, PidProvider } from '../core/ports.ts';
import { createEmbeddedPidProvider } from '../drivers/pid/embedded.ts';
import { createHandleRestProvider } from '../drivers/pid/handle-rest.ts';

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

export async function openPidProvider(config: Config, catalog: Catalog, clock: Clock): Promise<PidProvider> {
  const p = config.pid;
  if (p.prefix.includes('/') || !p.prefix) throw new ConfigError(`pid.prefix: '${p.prefix}' is not a handle prefix.`);
  if (p.provider === 'embedded') return createEmbeddedPidProvider({ catalog, clock, prefix: p.prefix });
  if (p.provider !== 'handle') throw new ConfigError(`pid.provider: expected embedded or handle, got '${p.provider}'.`);
  if (!p.handle_url || !p.handle_user) throw new ConfigError('pid.provider = handle needs pid.handle_url and pid.handle_user.');
  const password = p.handle_password_file
    ? (await readFile(p.handle_password_file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new ConfigError(`pid.handle_password_file: cannot read ${p.handle_password_file} (${err.code ?? err.message}).`);
    })).split(/\r?\n/, 1)[0]!
    : p.handle_password;
  if (!password) throw new ConfigError('pid.provider = handle needs pid.handle_password_file (or LADING_PID_HANDLE_PASSWORD).');
  return createHandleRestProvider({ baseUrl: p.handle_url, prefix: p.prefix, username: p.handle_user, password });
}
