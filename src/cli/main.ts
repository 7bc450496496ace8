/**
 * The `lading` command: `serve` and the admin commands. Only wires: parses arguments, loads
 * the configuration, creates dependencies and calls into them. Secrets come from standard
 * input, never from arguments.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { type Config, ConfigError, loadConfig } from '../wiring/config.ts';
import { createDeps, type Deps } from '../wiring/deps.ts';
import { startServer, VERSION } from '../wiring/server.ts';
import { hashPassword } from '../identity/secrets/password.ts';
import { parsePath } from '../core/path.ts';
import { ACCESS_LEVELS, type AccessLevel, type JobState } from '../core/types.ts';
import { LadingError } from '../core/errors.ts';
import { readSecret } from './secret.ts';
import { checkDeployment } from '../wiring/check.ts';
import { caExport, proxyShow } from './credential-commands.ts';

interface CommonOptions {
  config?: string;
  data?: string;
  listen?: string;
}

async function configFrom(opts: CommonOptions): Promise<Config> {
  const fileText = opts.config ? await readFile(opts.config, 'utf8') : undefined;
  return loadConfig({ env: process.env, fileText, fileName: opts.config, flags: { data: opts.data, listen: opts.listen } });
}

/** Runs an admin action against the data directory and closes it again. */
async function withDeps(opts: CommonOptions, action: (deps: Deps) => Promise<void>): Promise<void> {
  const config = await configFrom(opts);
  const deps = await createDeps({ ...config, log: { level: 'warn' } });
  try {
    await deps.backend.init(new Date(0));
    await action(deps);
  } finally {
    await deps.close();
  }
}

function common(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (JSON)')
    .option('--data <dir>', 'data directory (default ./lading-data)');
}

async function serve(opts: CommonOptions & { check?: boolean }): Promise<void> {
  const config = await configFrom(opts);
  if (opts.check) {
    process.stdout.write(await checkDeployment(config));
    return;
  }
  const server = await startServer(config);
  process.stdout.write(`lading ${VERSION} listening on ${server.url}\n  data directory: ${server.deps.dataDir}\n  zone: /${config.zone}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.deps.logger.info({ signal }, 'shutting down: letting requests in flight finish');
    // NOTE: uploads still running after the grace period are cut off; they roll back, since
    // nothing is visible before its catalog commit.
    await server.close(30_000);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

function program(): Command {
  const cli = new Command('lading')
    .description('Data-staging HTTP API: upload, download, list, create and rename data with persistent identifiers.')
    .version(VERSION);

  common(cli.command('serve').description('run the HTTP API (embedded defaults: SQLite catalog, files on local disk)'))
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:8080)')
    .option('--check', 'check the configuration and that the catalog and resource are reachable, then exit')
    .action(serve);

  const user = cli.command('user').description('manage local users');
  common(user.command('add <name>').description('create a user and its home collection; the password is read from standard input'))
    .addOption(new Option('--admin', 'create an administrator (may access everything)'))
    .option('--no-password', 'create a user who can only log in through an identity provider')
    .action(async (name: string, opts: CommonOptions & { admin?: boolean; password: boolean }) => {
      const password = opts.password ? await readSecret(`Password for ${name}: `) : null;
      await withDeps(opts, async ({ backend }) => {
        await backend.addUser(name, { kind: opts.admin ? 'admin' : 'user', passwordHash: password === null ? null : await hashPassword(password) });
        process.stdout.write(`created ${opts.admin ? 'administrator' : 'user'} ${name}, home ${backend.homeOf(name)}\n`);
      });
    });
  common(user.command('passwd <name>').description('set a user\'s password, read from standard input'))
    .action(async (name: string, opts: CommonOptions) => {
      const password = await readSecret(`New password for ${name}: `);
      await withDeps(opts, async ({ catalog }) => {
        await catalog.setPasswordHash(name, await hashPassword(password));
        process.stdout.write(`password of ${name} changed\n`);
      });
    });
  common(user.command('list').description('list users, administrators and groups'))
    .action(async (opts: CommonOptions) => withDeps(opts, async ({ catalog }) => {
      for (const u of await catalog.listUsers()) process.stdout.write(`${u.name}\t${u.kind}\n`);
    }));

  const group = cli.command('group').description('manage groups');
  common(group.command('add <name>').description('create a group'))
    .action(async (name: string, opts: CommonOptions) => withDeps(opts, async ({ backend }) => {
      await backend.addUser(name, { kind: 'group' });
      process.stdout.write(`created group ${name}\n`);
    }));
  common(group.command('member <group> <user>').description('add a user to a group'))
    .action(async (groupName: string, userName: string, opts: CommonOptions) => withDeps(opts, async ({ catalog }) => {
      await catalog.addToGroup(groupName, userName);
      process.stdout.write(`${userName} is a member of ${groupName}\n`);
    }));

  const acl = cli.command('acl').description('manage access control lists');
  common(acl.command('set <path> <principal> <level>').description(`grant access: level is ${ACCESS_LEVELS.join(', ')} or none`))
    .action(async (path: string, principal: string, level: string, opts: CommonOptions) => withDeps(opts, async ({ catalog }) => {
      if (level !== 'none' && !ACCESS_LEVELS.includes(level as AccessLevel)) throw new LadingError('BAD_REQUEST', `level must be one of ${ACCESS_LEVELS.join(', ')} or none`);
      if (principal !== 'public' && !(await catalog.getUser(principal))) throw new LadingError('NOT_FOUND', `no user or group '${principal}'`);
      await catalog.setAccess(parsePath(path), principal, level === 'none' ? null : (level as AccessLevel));
      process.stdout.write(`${principal}: ${level} on ${path}\n`);
    }));
  common(acl.command('list <path>').description('show the access list of a path'))
    .action(async (path: string, opts: CommonOptions) => withDeps(opts, async ({ catalog }) => {
      for (const e of await catalog.listAccess(parsePath(path))) process.stdout.write(`${e.principal}\t${e.level}\n`);
    }));

  common(cli.command('proxy').description('inspect proxy certificates').command('show <user>').description('show the proxy of the user\'s most recent session: subject, issuer, time left'))
    .action(async (name: string, opts: CommonOptions) => withDeps(opts, async (deps) => {
      process.stdout.write(await proxyShow(deps, name, deps.clock.now()));
    }));
  common(cli.command('ca').description('the embedded certificate authority').command('export <dir>').description('write the CA certificate as <hash>.0 and <hash>.signing_policy (grid-security layout)'))
    .action(async (dir: string, opts: CommonOptions) => withDeps(opts, async (deps) => {
      process.stdout.write(await caExport(deps, dir));
    }));

  common(cli.command('jobs').description('list durable jobs (PID registration): pending, running, failed, done'))
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(['pending', 'running', 'done', 'failed']))
    .option('--limit <n>', 'at most this many, newest first', '50')
    .action(async (opts: CommonOptions & { state?: JobState; limit: string }) => withDeps(opts, async ({ catalog }) => {
      const jobs = await catalog.listJobs(opts.state ?? null, Number(opts.limit) || 50);
      process.stdout.write('id\tstate\tattempts\tupdated\twhat\terror\n');
      for (const j of jobs) {
        let what = j.kind;
        try {
          const p = JSON.parse(j.payload) as { action?: string; path?: string };
          what = `${p.action ?? j.kind} ${p.path ?? ''}`.trim();
        } catch { /* an unreadable payload is shown by kind only */ }
        process.stdout.write(`${j.id}\t${j.state}\t${j.attempts}\t${j.updatedAt.toISOString()}\t${what}\t${j.lastError ?? ''}\n`);
      }
    }));

  return cli;
}

try {
  await program().parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError || err instanceof LadingError) {
    process.stderr.write(`lading: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
