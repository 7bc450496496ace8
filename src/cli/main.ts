/**
 * The `lading` command, one entry point for two audiences. The client commands (`login`, `ls`,
 * `put`, …, in `src/client/`) sit at the top level, as users type them every day; the server
 * administration commands (`serve`, `init`, `user`, `group`, `acl`, `ca`, `backup`, `restore`, `jobs`,
 * `proxy show`)
 * keep their names, so operators' scripts keep working, and are listed under their own heading
 * in `--help`. `proxy` is both: `lading proxy [renew]` is the caller's own proxy over the API,
 * `lading proxy show <user> --data DIR` the admin view.
 *
 * For the admin commands: only parses arguments, calls
 * what the composition root (`wiring/index.ts`) exports — the admin commands go through the
 * admin service, which checks them as the API does — and prints. Reads no configuration key
 * itself. Secrets come from standard input, never from arguments. Every failure is one line on
 * standard error, never a stack: exit code 2 for a configuration mistake, 1 otherwise.
 *
 * The server and its drivers are loaded only by the commands that need them (`wiring()`): the
 * client commands, `--help` and `--version` start without them.
 */
import { Argument, Command, Option } from 'commander';
import type { AdminConsole, CliOptions } from '../wiring/index.ts';
import type { FsckReport } from '../core/fixity.ts';
import { OperatorError } from '../wiring/operator-error.ts';
import { CLIENT_ONLY, versionLine } from '../wiring/version.ts';
import { ACCESS_LEVELS } from '../core/types.ts';
import { JOB_STATES } from '../core/admin.ts';
import { LadingError } from '../core/errors.ts';
import { type QuotaRecord, formatBytes, parseSize } from '../core/quotas.ts';
import { readSecret } from './secret.ts';
import { caExported, proxyShow } from './credential-commands.ts';
import { SHELLS, completionScript } from './completion.ts';
import { ownerDeps, registerClientCommands, registerProxyCommands, withClientOptions } from '../client/commands.ts';
import { clientAcl } from '../client/owner-commands.ts';
import { existsSync } from 'node:fs';
import { registerTransferCommands } from '../client/transfer/commands.ts';
import { EXIT } from '../client/exit-codes.ts';
import { AUDIT_ACTIONS, type AuditQuery, auditJson } from '../core/audit.ts';
import { parsePath } from '../core/path.ts';

// NOTE: a reader that went away (`lading ls -l | head`) ends the command quietly, as SIGPIPE
// ends a Unix tool: no message, exit 141 (128 + SIGPIPE, what a shell reports for such a
// tool). Node ignores SIGPIPE and reports EPIPE on the stream instead. Transfers in flight
// stop where they are; their part files and resumable uploads continue on the next run.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.PIPE);
  throw err;
});
process.stderr.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.PIPE);
  throw err;
});

/** The composition root, loaded on first use. */
const wiring = () => import('../wiring/index.ts');

const warn = (message: string): void => {
  process.stderr.write(`lading: warning: ${message}\n`);
};

/** Runs an admin action against the data directory, which must exist, and closes it again. */
async function withAdmin(opts: CliOptions, action: (admin: AdminConsole) => Promise<void>): Promise<void> {
  const { openAdmin, resolveConfig } = await wiring();
  const opened = await openAdmin(await resolveConfig(opts, warn));
  try {
    await action(opened);
  } finally {
    await opened.close();
  }
}

function common(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file (JSON)')
    .option('--data <dir>', 'data directory (default ./lading-data)');
}

async function serve(opts: CliOptions & { check?: boolean }): Promise<void> {
  const { announceServer, checkDeployment, resolveConfig, startServer } = await wiring();
  const config = await resolveConfig(opts, warn);
  if (opts.check) {
    process.stdout.write(await checkDeployment(config));
    return;
  }
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let signals = 0;
  // NOTE: a signal that arrives while the server starts is held until it has started (the
  // catalog opened, leftovers swept, the port bound), and then stops it in order; a second one
  // stops at once. Without handlers that early, Node's default would end the process in the
  // middle of its start, or just after its first answers.
  let held: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (!server) {
      if (signals > 1) process.exit(1);
      held = signal;
      process.stderr.write(`lading: ${signal} while starting: stopping once started (a second signal stops at once)\n`);
      return;
    }
    const { logger } = server.deps;
    const running = server;
    if (signals === 1) {
      logger.info(`${signal}: shutting down, letting requests in flight finish (a second signal stops at once)`);
      // NOTE: uploads cut off at the deadline roll back, since nothing is visible before its
      // catalog commit; exiting 0 says the stop was the orderly one.
      running.close().then(() => {
        logger.info('stopped');
        process.exit(signals > 1 ? 1 : 0);
      }, (err: unknown) => {
        logger.error({ err }, 'shutting down failed');
        process.exit(1);
      });
      return;
    }
    logger.warn(`${signal} again: stopping at once`);
    running.cutOff('stopping at once');
    // NOTE: the close in progress finishes once its connections are gone; should a driver
    // hang on closing, the process stops anyway.
    setTimeout(() => process.exit(1), 2000).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  server = await startServer(config);
  announceServer(server);
  if (held) {
    signals = 0;
    onSignal(held);
  }
}

const ADMIN_GROUP = 'Server administration (on the server\'s data directory):';
const CLIENT_GROUP = 'Client commands (against a server; log in first):';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `lading fsck`'s answer: the problems as one table (PATH, PROBLEM, DETAIL), then a summary line. */
function fsckTable(report: FsckReport): string {
  const rows = report.problems.map((p) => [p.path, p.repaired ? `${p.kind} (removed)` : p.kind, p.detail]);
  const count = (kind: string): number => report.problems.filter((p) => p.kind === kind).length;
  const removed = report.problems.filter((p) => p.repaired).length;
  const summary = `checked ${plural(report.checked, 'object')} (${report.bytes} bytes read whole)${report.keys > 0 ? ` and ${plural(report.keys, 'stored key')}` : ''}: `
    + (report.problems.length === 0 ? 'no problems' : `${count('damaged')} damaged, ${count('missing')} missing, ${plural(count('orphan'), 'orphan')}${removed > 0 ? ` (${removed} removed)` : ''}`);
  if (rows.length === 0) return `${summary}\n`;
  const table = [['PATH', 'PROBLEM', 'DETAIL'], ...rows];
  const widths = [0, 1].map((i) => Math.max(...table.map((r) => r[i]!.length)));
  return table.map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`).join('\n') + `\n${summary}\n`;
}

/** A whole number of data objects given on the command line; `BAD_REQUEST` otherwise. */
function parseCount(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) throw new LadingError('BAD_REQUEST', `'${text}' is not a number of data objects: give a whole number, or none.`);
  return n;
}

/** One quota on one line: `<path> (<user>): <used> of <max> bytes, <n> of <max> data objects`. */
function quotaLine(q: QuotaRecord): string {
  const bytes = `${formatBytes(q.bytes)} of ${q.maxBytes === null ? 'unlimited' : formatBytes(q.maxBytes)}`;
  const objects = `${q.objects} of ${q.maxObjects === null ? 'unlimited' : q.maxObjects} data objects`;
  return `${q.path}${q.user === null ? '' : ` (${q.user})`}: ${bytes}, ${objects}`;
}

interface AuditOptions extends CliOptions {
  user?: string;
  path?: string;
  action?: string;
  since?: string;
  until?: string;
  json?: boolean;
}

/** The filters of `lading audit` and `lading audit export`; a bad date or path is one line, exit 2. */
function auditQuery(opts: AuditOptions): Omit<AuditQuery, 'limit'> {
  const date = (value: string | undefined, name: string): Date | null => {
    if (value === undefined) return null;
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) {
      process.stderr.write(`lading: --${name} '${value}' is not a date and time (e.g. 2026-11-27 or 2026-11-27T12:00:00Z)\n`);
      process.exit(EXIT.USAGE);
    }
    return at;
  };
  return {
    user: opts.user ?? null, action: opts.action ?? null, path: opts.path === undefined ? null : parsePath(opts.path),
    since: date(opts.since, 'since'), until: date(opts.until, 'until'),
  };
}

function auditFilters(cmd: Command): Command {
  return cmd
    .option('--user <name>', 'only records of this user')
    .option('--path <path>', 'only records of this path and below it')
    .addOption(new Option('--action <action>', 'only records of this action').choices(AUDIT_ACTIONS))
    .option('--since <time>', 'only records at or after this time (ISO 8601)')
    .option('--until <time>', 'only records before this time (ISO 8601)');
}

/** `lading audit` (a table, or JSON lines with --json), `lading audit export` (JSON lines) and `lading audit verify`. */
function registerAuditCommands(cli: Command): void {
  const audit = auditFilters(common(cli.command('audit').description('(administration) the audit trail: who did what, when, through which door, and the outcome; verify its chain, or export it as JSON lines')))
    .option('--json', 'one JSON object a line instead of a table')
    .action(async (opts: AuditOptions) => withAdmin(opts, async ({ auditRecords }) => {
      const query = auditQuery(opts);
      if (!opts.json) process.stdout.write('seq\tat\tuser\taddress\tdoor\taction\toutcome\tpath\tdetail\n');
      for await (const r of auditRecords(query)) {
        process.stdout.write(opts.json ? `${JSON.stringify(auditJson(r))}\n`
          : `${r.seq}\t${r.at.toISOString()}\t${r.actor ?? '-'}\t${r.address ?? '-'}\t${r.door}\t${r.action}\t${r.outcome}\t${r.path ?? '-'}\t${JSON.stringify(r.detail)}\n`);
      }
    }));
  auditFilters(common(audit.command('export').description('write the audit trail as JSON lines, one record a line, to standard output')))
    // NOTE: the parent's options (--data, --config, the filters) may stand before or after the subcommand's name.
    .action(async (_opts: AuditOptions, cmd: Command) => withAdmin(cmd.optsWithGlobals<AuditOptions>(), async ({ auditRecords }) => {
      for await (const r of auditRecords(auditQuery(cmd.optsWithGlobals<AuditOptions>()))) process.stdout.write(`${JSON.stringify(auditJson(r))}\n`);
    }));
  common(audit.command('verify').description('check the audit trail\'s hash chain from its oldest kept record: exit 0 when intact, 1 naming the first broken record'))
    .action(async (_opts: CliOptions, cmd: Command) => withAdmin(cmd.optsWithGlobals<CliOptions>(), async ({ verifyAudit }) => {
      const check = await verifyAudit();
      if (!check.intact) throw new OperatorError(`the audit trail is broken at record ${check.seq}: ${check.reason} (${plural(check.count, 'record')} before it verified)`);
      process.stdout.write(`${plural(check.count, 'record')}, chain intact\n`);
    }));
}

function program(): Command {
  const cli = new Command('lading')
    .description('Data-staging HTTP API: upload, download, list, create and rename data with persistent identifiers.')
    .version(versionLine());

  cli.commandsGroup(CLIENT_GROUP);
  registerClientCommands(cli);
  registerTransferCommands(cli);
  const proxy = cli.command('proxy').description('your proxy certificate: show it, or renew it (proxy renew); admins: proxy show <user> --data DIR');
  common(proxy.command('show <user>').description('(administration) show the proxy of the user\'s most recent session: subject, issuer, time left'))
    .action(async (name: string, opts: CliOptions) => withAdmin(opts, async (admin) => {
      process.stdout.write(await proxyShow(admin, name));
    }));
  registerProxyCommands(proxy);

  cli.commandsGroup(ADMIN_GROUP);
  common(cli.command('serve').description('run the HTTP API (embedded defaults: SQLite catalog, files on local disk)'))
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:8080)')
    .option('--check', 'check the configuration and that the catalog and resource are reachable, then exit')
    .action(serve);

  common(cli.command('init').description('create the data directory (catalog, CA, keys) without serving; the other commands need one'))
    .action(async (opts: CliOptions) => {
      const { openAdmin, resolveConfig } = await wiring();
      const opened = await openAdmin(await resolveConfig(opts, warn), { create: true });
      await opened.close();
      process.stdout.write(`data directory ${opened.dataDir} is ready\n`);
    });

  const user = cli.command('user').description('manage local users');
  common(user.command('add <name>').description('create a user and its home collection; the password is read from standard input'))
    .addOption(new Option('--admin', 'create an administrator (may access everything)'))
    .option('--no-password', 'create a user who can only log in through an identity provider')
    .action(async (name: string, opts: CliOptions & { admin?: boolean; password: boolean }) => withAdmin(opts, async ({ admin }) => {
      const password = opts.password ? await readSecret(`Password for ${name}: `) : null;
      const home = await admin.addUser(name, { admin: opts.admin === true, password });
      process.stdout.write(`created ${opts.admin ? 'administrator' : 'user'} ${name}, home ${home}\n`);
    }));
  common(user.command('passwd <name>').description('set a user\'s password, read from standard input, and end the user\'s sessions'))
    .option('--no-password', 'remove the password: the user can then only log in through an identity provider')
    .action(async (name: string, opts: CliOptions & { password: boolean }) => withAdmin(opts, async ({ admin }) => {
      const password = opts.password ? await readSecret(`New password for ${name}: `) : null;
      const ended = await admin.setPassword(name, password);
      process.stdout.write(`password of ${name} ${password === null ? 'removed' : 'changed'}; ${plural(ended, 'session')} ended\n`);
    }));
  common(user.command('revoke <name>').description('end every session of a user: tokens, refresh tokens and sign-ins stop working at once'))
    .action(async (name: string, opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      process.stdout.write(`${plural(await admin.revokeSessions(name), 'session')} of ${name} ended\n`);
    }));
  common(user.command('disable <name>').description('stop a user from logging in by any means, and end their sessions'))
    .action(async (name: string, opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      await admin.setDisabled(name, true);
      process.stdout.write(`${name} disabled; their sessions are ended\n`);
    }));
  common(user.command('enable <name>').description('let a disabled user log in again'))
    .action(async (name: string, opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      await admin.setDisabled(name, false);
      process.stdout.write(`${name} enabled\n`);
    }));
  common(user.command('list').description('list users, administrators and groups'))
    .action(async (opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      for (const u of await admin.listUsers()) process.stdout.write(`${u.name}\t${u.kind}${u.disabled ? '\tdisabled' : ''}\n`);
    }));

  const group = cli.command('group').description('manage groups');
  common(group.command('add <name>').description('create a group'))
    .action(async (name: string, opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      await admin.addGroup(name);
      process.stdout.write(`created group ${name}\n`);
    }));
  common(group.command('member <group> <user>').description('add a user to a group'))
    .action(async (groupName: string, userName: string, opts: CliOptions) => withAdmin(opts, async ({ admin }) => {
      await admin.addToGroup(groupName, userName);
      process.stdout.write(`${userName} is a member of ${groupName}\n`);
    }));

  // NOTE: one command for two audiences: an owner over the API as the logged-in user, an
  // administrator on the data directory. --data or --config (or a ./lading-data here, the
  // admin commands' default) says which.
  const acl = cli.command('acl').description('access lists: yours over the API (you need own), or with --data DIR any, as administrator');
  const admin = (opts: CliOptions): boolean => opts.data !== undefined || opts.config !== undefined || existsSync('lading-data');
  const ownerAcl = clientAcl(ownerDeps);
  withClientOptions(common(acl.command('set <path> <principal> <level>').description(`grant access: level is ${ACCESS_LEVELS.join(', ')} or none (removes the entry)`)))
    .action(async (path: string, principal: string, level: string, opts: CliOptions & { server?: string; json?: boolean; quiet?: boolean }) => (admin(opts) ? withAdmin(opts, async ({ admin: a }) => {
      await a.setAccess(path, principal, level);
      process.stdout.write(`${principal}: ${level} on ${path}\n`);
    }) : ownerAcl.set(path, principal, level, opts)));
  withClientOptions(common(acl.command('list <path>').alias('ls').description('show the access list of a path')))
    .action(async (path: string, opts: CliOptions & { server?: string; json?: boolean; quiet?: boolean }) => (admin(opts) ? withAdmin(opts, async ({ admin: a }) => {
      for (const e of await a.listAccess(path)) process.stdout.write(`${e.principal}\t${e.level}\n`);
    }) : ownerAcl.list(path, opts)));

  const quota = cli.command('quota').description('quotas: the bytes and data objects a user\'s home or a collection may hold (the trash counts)');
  common(quota.command('set <target>').description('set the quota of a user (their home) or of a collection (its path, starting with /); a bound not given is kept'))
    .option('--bytes <size>', 'bytes allowed: a number with a unit (500MiB, 10GiB, 2TB) or none')
    .option('--objects <n>', 'data objects allowed, or none')
    .action(async (target: string, opts: CliOptions & { bytes?: string; objects?: string }) => withAdmin(opts, async ({ quotas }) => {
      const q = await quotas.set(target, {
        ...(opts.bytes === undefined ? {} : { maxBytes: opts.bytes === 'none' ? null : parseSize(opts.bytes) }),
        ...(opts.objects === undefined ? {} : { maxObjects: opts.objects === 'none' ? null : parseCount(opts.objects) }),
      });
      process.stdout.write(`quota of ${quotaLine(q)}\n`);
    }));
  common(quota.command('show [target]').description('show the quota and usage of a user or a collection, or every quota'))
    .action(async (target: string | undefined, opts: CliOptions) => withAdmin(opts, async ({ quotas }) => {
      if (target !== undefined) {
        const q = await quotas.get(target);
        process.stdout.write(q ? `${quotaLine(q)}\n` : `${target} has no quota\n`);
        return;
      }
      for (const q of await quotas.list()) process.stdout.write(`${quotaLine(q)}\n`);
    }));
  common(quota.command('clear <target>').description('remove the quota of a user or a collection'))
    .action(async (target: string, opts: CliOptions) => withAdmin(opts, async ({ quotas }) => {
      process.stdout.write(await quotas.clear(target) ? `quota of ${target} removed\n` : `${target} had no quota\n`);
    }));

  common(cli.command('takedown <target>').description('(administration) remove the bytes of a data object or collection at once (a legal or privacy request): target is its path, or its trash entry\'s id; its PID keeps resolving to a tombstone that records who and why'))
    .requiredOption('--reason <text>', 'why (shown on the tombstone and in the audit log)')
    .option('--by <name>', 'who asks, recorded on the tombstone (default: operator)')
    .action(async (target: string, opts: CliOptions & { reason: string; by?: string }) => withAdmin(opts, async ({ takedown, pidRules }) => {
      const entry = await takedown(target, opts.reason, opts.by);
      process.stdout.write(`taken down: ${entry.path} (${entry.kind}, id ${entry.id}${entry.pid ? `, PID ${entry.pid}` : ''}) by ${entry.removedBy}: ${entry.removalReason}\n`);
      // NOTE: the bytes are gone either way (a legal request cannot wait); the tombstone record
      // needs the rules the server runs with, which an operator's shell may lack.
      if (entry.pid && !pidRules) process.stderr.write(`lading: warning: this command ran without PID rules (pid.rules), so the record of ${entry.pid} still points at the data: give admin commands the server's configuration (--config, or the same LADING_ variables), so that a takedown points the record at its tombstone.\n`);
    }));

  common(cli.command('fsck').description('(administration) check every stored object\'s bytes against its checksum, and the store for bytes no object refers to; damaged and missing objects are marked (downloads refuse them); exit 1 while problems remain'))
    .option('--repair', 'remove the orphans found (bytes no object refers to, older than recovery.grace); damaged and missing objects are left for you to restore')
    .option('--path <path>', 'check only the objects at or below this path (no orphans are looked for)')
    .action(async (opts: CliOptions & { repair?: boolean; path?: string }) => withAdmin(opts, async ({ fsck }) => {
      const report = await fsck({ repair: opts.repair === true, ...(opts.path === undefined ? {} : { path: opts.path }) });
      process.stdout.write(fsckTable(report));
      const remaining = report.problems.filter((p) => !p.repaired).length;
      if (remaining > 0) process.exitCode = 1;
    }));

  const ca = cli.command('ca').description('the embedded certificate authority');
  common(ca.command('export <dir>').description('write the CA certificates trusted now as <hash>.0 and <hash>.signing_policy (grid-security layout)'))
    .action(async (dir: string, opts: CliOptions) => withAdmin(opts, async ({ exportCa }) => {
      process.stdout.write(caExported(await exportCa(dir)));
    }));
  common(ca.command('rotate').description('make a new CA sign user certificates on every node sharing the catalog; the old one stays trusted until what it signed has expired'))
    .action(async (opts: CliOptions) => withAdmin(opts, async ({ rotateCa }) => {
      const { generation, subject } = await rotateCa();
      process.stdout.write(`the CA of generation ${generation} (${subject}) signs from now on; nodes take it up within ca.refresh seconds, and the previous CA stays trusted until what it signed has expired\n`);
    }));

  common(cli.command('backup <dest>').description('copy the data directory (SQLite catalog snapshot, stored bytes, CA, keys) into a new directory, while the server runs'))
    .action(async (dest: string, opts: CliOptions) => {
      const { backupModule, resolveConfig } = await wiring();
      const { backupDataDir, describeBackup } = await backupModule();
      const done = await backupDataDir(await resolveConfig(opts, warn), dest, opts.config ?? null);
      process.stdout.write(describeBackup('backup', done));
      if (done.problemCount > 0) throw new OperatorError(`backup: the data directory lacks or holds damaged bytes of ${plural(done.problemCount, 'object')}: ${done.problems.join(', ')}`);
    });
  common(cli.command('restore <backup>').description('restore a backup into a new, empty data directory (--data), then check every object against its SHA-256'))
    .action(async (from: string, opts: CliOptions) => {
      const { backupModule, resolveConfig } = await wiring();
      const { describeBackup, restoreDataDir } = await backupModule();
      const done = await restoreDataDir(await resolveConfig(opts, warn), from);
      process.stdout.write(describeBackup('restore', done, from));
      if (done.problemCount > 0) throw new OperatorError(`restore: ${plural(done.problemCount, 'object')} did not verify: ${done.problems.join(', ')}`);
    });

  common(cli.command('jobs').description('list durable jobs (PID registration): pending, running, failed, done'))
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(JOB_STATES))
    .option('--limit <n>', 'at most this many, newest first', '50')
    .action(async (opts: CliOptions & { state?: string; limit: string }) => withAdmin(opts, async ({ admin }) => {
      const jobs = await admin.listJobs({ state: opts.state ?? null, limit: Number(opts.limit) || 50 });
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

  registerAuditCommands(cli);

  cli.command('completion').helpGroup(CLIENT_GROUP)
    .description('print a shell completion script: eval "$(lading completion bash)", or for zsh, fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: (typeof SHELLS)[number]) => {
      process.stdout.write(completionScript(cli, shell));
    });

  if (CLIENT_ONLY) clientOnly(cli);
  globalClientOptions(cli);
  return cli;
}

/**
 * The options of every client command (`--server`, `--json`, `-q`) are taken before the
 * command too (`lading --server bob ls`), as after it; `lading` alone or an unknown command
 * is a usage mistake: one `lading: …` line, exit 2. Set once the commands are registered, so
 * that the admin commands keep their own handling.
 */
function globalClientOptions(cli: Command): void {
  cli
    .option('--server <name|url>', 'the server of a client command (also after the command)')
    .option('--json', 'machine-readable output of a client command (also after the command)')
    .option('-q, --quiet', 'print nothing but errors (also after the command)')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.USAGE))
    .configureOutput({ outputError: (text, write) => write(`lading: ${text.replace(/^error: /, '')}`) })
    .hook('preAction', (root, command) => {
      const given = root.opts<{ server?: string; json?: boolean; quiet?: boolean }>();
      for (const key of ['server', 'json', 'quiet'] as const) {
        if (given[key] === undefined) continue;
        if (!command.options.some((o) => o.attributeName() === key)) {
          process.stderr.write(`lading: ${key === 'quiet' ? '-q' : `--${key}`} does not apply to ${command.name()}\n`);
          process.exit(EXIT.USAGE);
        }
        if (command.getOptionValue(key) === undefined) command.setOptionValue(key, given[key]);
      }
    });
}

/**
 * Leaves the client commands only, for the single-file client, which holds no server: the
 * administration group and `proxy show` go (their code is not in that file); `acl` stays, as
 * the owner's command over the API.
 */
function clientOnly(cli: Command): void {
  cli.commands.find((c) => c.name() === 'acl')?.helpGroup(CLIENT_GROUP);
  const kept = cli.commands.filter((c) => c.helpGroup() !== ADMIN_GROUP);
  (cli.commands as Command[]).splice(0, cli.commands.length, ...kept);
  const proxy = cli.commands.find((c) => c.name() === 'proxy');
  if (proxy) (proxy.commands as Command[]).splice(0, proxy.commands.length, ...proxy.commands.filter((c) => c.name() !== 'show'));
}


if (process.argv.length <= 2) {
  process.stderr.write('lading: which command? lading --help lists them\n');
  process.exit(EXIT.USAGE);
}

// NOTE: a promise rather than a top-level await: the single-file client (scripts/build-client.mjs)
// is CommonJS, which has none.
program().parseAsync(process.argv).catch((err: unknown) => {
  // NOTE: what an operator can act on says so itself; anything else is a fault of lading,
  // still shown as one line (its message, which never holds a secret), with its kind.
  const known = err instanceof OperatorError || err instanceof LadingError;
  process.stderr.write(`lading: ${known ? '' : `unexpected ${err instanceof Error ? err.name : 'failure'}: `}${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof OperatorError ? err.exitCode : 1);
});
