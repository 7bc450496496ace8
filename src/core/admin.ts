/**
 * The operator's use cases (the `lading` admin commands): users, groups, access lists, proxies
 * and jobs. It acts with every right, as the catalog's owner, but checks what it is given as
 * the backend does — valid names, paths and levels, principals that exist, groups that are
 * groups — so no command can store what the API would refuse. Takes ports, reads no
 * configuration, prints nothing.
 */
import type { Backend } from './backend.ts';
import { PUBLIC_GROUP, refusePublicOwn } from './backend.ts';
import { type AuditDetail, type AuditSubject, type Auditor, noAudit } from './audit.ts';
import { LadingError } from './errors.ts';
import { type Path, parsePath } from './path.ts';
import type { AccountStore, Clock, CredentialManager, CredentialStatus, JobStore, NamespaceStore, SessionStore } from './ports.ts';
import { ACCESS_LEVELS, type AccessEntry, type AccessLevel, type JobRecord, type JobState, type PrincipalKind, type UserRecord } from './types.ts';

export const JOB_STATES: readonly JobState[] = ['pending', 'running', 'done', 'failed'];

export interface AdminServiceOptions {
  /** Creates users and their home collections (the one place user names are validated). */
  backend: Pick<Backend, 'addUser' | 'homeOf'>;
  catalog: AccountStore & NamespaceStore & SessionStore & JobStore;
  /** Reads the validity of the proxy a session holds. */
  credentials: Pick<CredentialManager, 'inspect'>;
  clock: Clock;
  /** Hashes a password for storage. */
  hashPassword(password: string): Promise<string>;
  /**
   * Ends what an identity provider holds for a user beyond lading's own sessions (the embedded
   * provider's grants, refresh tokens and browser sessions); resolves with how many.
   */
  revokeProviderGrants?(user: string): Promise<number>;
  /** The audit trail each command that changes something is recorded in (door `admin`); none when absent. */
  trail?: Auditor;
  /** Who the records name as the actor: the operator at the server's shell. Default `operator`. */
  operator?: string;
}

/** The name the records of admin commands give their actor by default. */
export const OPERATOR = 'operator';

export class AdminService {
  readonly #o: AdminServiceOptions;

  constructor(options: AdminServiceOptions) {
    this.#o = options;
  }

  /**
   * Creates a user (or, with `admin`, an administrator, who may access everything) and its
   * home collection, and resolves with the home's path. `password` null makes a user who can
   * only log in through an identity provider. `BAD_REQUEST` for an invalid name or an empty
   * password, `CONFLICT` when the name is taken.
   */
  async addUser(name: string, options: { admin: boolean; password: string | null }): Promise<Path> {
    return this.#audited('user.add', null, { name, admin: options.admin, password: options.password !== null }, () => this.#addUser(name, options));
  }

  async #addUser(name: string, options: { admin: boolean; password: string | null }): Promise<Path> {
    const passwordHash = options.password === null ? null : await this.#hash(options.password);
    await this.#o.backend.addUser(name, { kind: options.admin ? 'admin' : 'user', passwordHash });
    return this.#o.backend.homeOf(name);
  }

  /** Creates a group. `BAD_REQUEST` for an invalid name, `CONFLICT` when the name is taken. */
  async addGroup(name: string): Promise<void> {
    return this.#audited('group.add', null, { name }, () => this.#addGroup(name));
  }

  async #addGroup(name: string): Promise<void> {
    await this.#o.backend.addUser(name, { kind: 'group' });
  }

  /**
   * Sets the password of a user or administrator — or with null removes it, so the user can
   * only log in through an identity provider — and ends every session the user has (see
   * `revokeSessions`): whoever knew the old password loses what it gave them. Resolves with how
   * many sessions and grants were ended. `NOT_FOUND` when there is no such user, `BAD_REQUEST`
   * for a group (groups do not log in) or an empty password.
   */
  async setPassword(name: string, password: string | null): Promise<number> {
    return this.#audited('user.passwd', null, { name, password: password !== null }, () => this.#setPassword(name, password));
  }

  async #setPassword(name: string, password: string | null): Promise<number> {
    await this.#person(name);
    await this.#o.catalog.setPasswordHash(name, password === null ? null : await this.#hash(password));
    return this.#revokeSessions(name);
  }

  /**
   * Ends every session of a user: their bearer tokens stop working at the next request, on
   * every node, and the identity provider's grants and refresh tokens for them are revoked.
   * Resolves with how many were ended. `NOT_FOUND` when there is no such user, `BAD_REQUEST`
   * for a group.
   */
  async revokeSessions(name: string): Promise<number> {
    return this.#audited('user.revoke', null, { name }, () => this.#revokeSessions(name));
  }

  async #revokeSessions(name: string): Promise<number> {
    await this.#person(name);
    const sessions = await this.#o.catalog.deleteSessionsOf(name);
    return sessions + (await this.#o.revokeProviderGrants?.(name) ?? 0);
  }

  /**
   * Disables an account (no login by any means; every session ended, as `revokeSessions`) or
   * enables it again. Idempotent. `NOT_FOUND` when there is no such user, `BAD_REQUEST` for a
   * group.
   */
  async setDisabled(name: string, disabled: boolean): Promise<void> {
    return this.#audited(disabled ? 'user.disable' : 'user.enable', null, { name }, () => this.#setDisabled(name, disabled));
  }

  async #setDisabled(name: string, disabled: boolean): Promise<void> {
    await this.#person(name);
    await this.#o.catalog.setDisabled(name, disabled);
    if (disabled) await this.#revokeSessions(name);
  }

  /** Users, administrators and groups, sorted by name (never their password hashes). */
  async listUsers(): Promise<{ name: string; kind: PrincipalKind; disabled: boolean }[]> {
    return (await this.#o.catalog.listUsers()).map((u) => ({ name: u.name, kind: u.kind, disabled: u.disabled === true }));
  }

  /**
   * Adds a user or administrator to a group. Idempotent. `NOT_FOUND` when either does not
   * exist, `BAD_REQUEST` when `group` is not a group or `user` is one (groups do not nest).
   */
  async addToGroup(group: string, user: string): Promise<void> {
    return this.#audited('group.member', null, { group, user }, () => this.#addToGroup(group, user));
  }

  async #addToGroup(group: string, user: string): Promise<void> {
    const g = await this.#o.catalog.getUser(group);
    if (!g) throw new LadingError('NOT_FOUND', `no group '${group}'`);
    if (g.kind !== 'group') throw new LadingError('BAD_REQUEST', `'${group}' is a ${g.kind}, not a group`);
    await this.#person(user);
    await this.#o.catalog.addToGroup(group, user);
  }

  /**
   * Grants `principal` (a user, an administrator, a group, or `public`: every user) `level` on
   * `path` and what lies below it; `none` revokes what it held there. `INVALID_PATH` for a
   * malformed path, `BAD_REQUEST` for an unknown level or `own` for `public`, `NOT_FOUND` when the path or the
   * principal does not exist.
   */
  async setAccess(path: string, principal: string, level: string): Promise<void> {
    return this.#audited('acl.set', path, { principal, level }, () => this.#setAccess(path, principal, level));
  }

  async #setAccess(path: string, principal: string, level: string): Promise<void> {
    if (level !== 'none' && !ACCESS_LEVELS.includes(level as AccessLevel)) {
      throw new LadingError('BAD_REQUEST', `level must be one of ${ACCESS_LEVELS.join(', ')} or none`);
    }
    refusePublicOwn(principal, level === 'none' ? null : (level as AccessLevel));
    const target = await this.#existing(path);
    if (principal !== PUBLIC_GROUP && !(await this.#o.catalog.getUser(principal))) {
      throw new LadingError('NOT_FOUND', `no user or group '${principal}'`);
    }
    await this.#o.catalog.setAccess(target, principal, level === 'none' ? null : (level as AccessLevel));
  }

  /** The access list of `path` itself (not inherited entries). `INVALID_PATH`, `NOT_FOUND`. */
  async listAccess(path: string): Promise<AccessEntry[]> {
    return this.#o.catalog.listAccess(await this.#existing(path));
  }

  /**
   * The validity of the proxy the backend sees for `user`'s most recent session live at `now`
   * (default the clock's). `NOT_FOUND` when there is no such user or the user has no live
   * session with a credential; `BAD_REQUEST` for a group.
   */
  async proxyOf(user: string, now: Date = this.#o.clock.now()): Promise<CredentialStatus> {
    await this.#person(user);
    const session = await this.#o.catalog.latestSessionOf(user, now);
    if (!session?.credential) throw new LadingError('NOT_FOUND', `'${user}' has no live session, hence no proxy.`);
    return this.#o.credentials.inspect(session.credential);
  }

  /**
   * Durable jobs, newest first, at most `limit`, of one state or all. `BAD_REQUEST` for an
   * unknown state or a limit that is not a positive integer.
   */
  async listJobs(options: { state: string | null; limit: number }): Promise<JobRecord[]> {
    const { state, limit } = options;
    if (state !== null && !JOB_STATES.includes(state as JobState)) {
      throw new LadingError('BAD_REQUEST', `state must be one of ${JOB_STATES.join(', ')}`);
    }
    if (!Number.isInteger(limit) || limit < 1) throw new LadingError('BAD_REQUEST', 'limit must be a positive integer');
    return this.#o.catalog.listJobs(state as JobState | null, limit);
  }

  /**
   * Runs an operator command that another service carries out (`quota.set`, `fsck.repair`,
   * `ca.rotate`, …) and records it and its outcome in the audit trail as this service's own
   * commands are. `detail` must hold no secret.
   */
  async recorded<T>(command: string, path: string | null, detail: AuditDetail, fn: () => Promise<T>): Promise<T> {
    return this.#audited(command, path, detail, fn);
  }

  /** Runs the command `command` and records it and its outcome (never a password: `detail` says only whether one was given). */
  async #audited<T>(command: string, path: string | null, detail: AuditDetail, fn: () => Promise<T>): Promise<T> {
    const subject: AuditSubject = { user: this.#o.operator ?? OPERATOR, via: { door: 'admin', address: null } };
    return (this.#o.trail ?? noAudit).track(subject, 'admin', path, fn, undefined, { command, ...detail });
  }

  async #hash(password: string): Promise<string> {
    if (!password) throw new LadingError('BAD_REQUEST', 'the password is empty');
    return this.#o.hashPassword(password);
  }

  /** The user or administrator `name`: `NOT_FOUND` when missing, `BAD_REQUEST` for a group. */
  async #person(name: string): Promise<UserRecord> {
    const record = await this.#o.catalog.getUser(name);
    if (!record) throw new LadingError('NOT_FOUND', `no user '${name}'`);
    if (record.kind === 'group') throw new LadingError('BAD_REQUEST', `'${name}' is a group, not a user`);
    return record;
  }

  async #existing(raw: string): Promise<Path> {
    const path = parsePath(raw);
    if (!(await this.#o.catalog.getEntity(path))) throw new LadingError('NOT_FOUND', `'${path}' does not exist`);
    return path;
  }
}
