/**
 * The composition root's face to the `lading` command: resolving the configuration from the
 * command line and the environment, starting a server, checking a deployment, and opening a
 * data directory for the admin commands. The command calls only these and never reads a
 * configuration key itself.
 */
import { readFile } from 'node:fs/promises';
import { type Config, ConfigError, loadConfig, unknownVariables } from './config.ts';

export { ConfigError };
export { OperatorError } from './operator-error.ts';
export type { Config };
export { startServer, announceServer, VERSION, type RunningServer } from './server.ts';
export { checkDeployment } from './check.ts';
export { openAdmin, type AdminConsole } from './admin.ts';

/** What the command line may set: the `--config` file and the flags that override it. */
export interface CliOptions {
  config?: string;
  data?: string;
  listen?: string;
}

/**
 * The configuration from the `--config` file, then `LADING_…` variables of `env`, then the
 * flags. Rejects with `ConfigError` when the file cannot be read or anything in it is wrong;
 * calls `warn` for each `LADING_…` variable that is no key's (it is ignored).
 */
export async function resolveConfig(
  cli: CliOptions, warn: (message: string) => void, env: Record<string, string | undefined> = process.env,
): Promise<Config> {
  for (const message of unknownVariables(env)) warn(message);
  let fileText: string | undefined;
  if (cli.config) {
    try {
      fileText = await readFile(cli.config, 'utf8');
    } catch (err) {
      throw new ConfigError(`--config: cannot read '${cli.config}' (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  return loadConfig({ env, fileText, fileName: cli.config, flags: { data: cli.data, listen: cli.listen } });
}
