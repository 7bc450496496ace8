/**
 * The composition root's face to the `lading` command: resolving the configuration from the
 * command line and the environment, starting a server, checking a deployment, and opening a
 * data directory for the admin commands. The command calls only these and never reads a
 * configuration key itself.
 *
 * The server (Fastify, the routes: `server.ts`) and the deployment check are loaded by the
 * calls that need them, so that the admin commands start without them.
 */
import { readFile } from 'node:fs/promises';
import { type Config, ConfigError, loadConfig, unknownVariables } from './config.ts';
import type { DepsOverrides } from './deps.ts';
import type { RunningServer } from './server.ts';

export { ConfigError };
export { OperatorError } from './operator-error.ts';
export type { Config, RunningServer };
export { VERSION } from './version.ts';
export { openAdmin, type AdminConsole } from './admin.ts';

let serverModule: typeof import('./server.ts') | undefined;

/** `startServer` of `server.ts`, loaded by this call. */
export async function startServer(config: Config, overrides?: DepsOverrides): Promise<RunningServer> {
  serverModule ??= await import('./server.ts');
  return serverModule.startServer(config, overrides);
}

/** `announceServer` of `server.ts`, for a server `startServer` started (which loaded it). */
export function announceServer(server: RunningServer): void {
  if (!serverModule) throw new Error('announceServer: no server was started');
  serverModule.announceServer(server);
}

/** `checkDeployment` of `check.ts`, loaded by this call. */
export async function checkDeployment(config: Config): Promise<string> {
  return (await import('./check.ts')).checkDeployment(config);
}

/** The backup and restore of an embedded deployment (`backup.ts`), loaded by this call. */
export async function backupModule(): Promise<typeof import('./backup.ts')> {
  return import('./backup.ts');
}

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
