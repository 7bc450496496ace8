/**
 * The audit trail: a durable, tamper-evident record of every security-relevant or
 * data-changing event — who (user, address, door), what, when and the outcome — kept in the
 * catalog. Each record carries the hash of the one before it, so an edited, inserted or
 * removed record breaks the chain that `verifyAuditChain` walks. Records never hold a secret:
 * the detail is a small object of names, ids and sizes that the callers build, never a
 * password, token, key secret or share password. Reads are not recorded. Takes ports; knows
 * nothing of HTTP.
 */
import { createHash } from 'node:crypto';
import { LadingError, isLadingError } from './errors.ts';
import type { Clock } from './ports.ts';
import { pruneInBatches } from './retention.ts';

/** Through which door an event came: the API, WebDAV, S3, the web app, an admin command, a share link. */
export type AuditDoor = 'api' | 'dav' | 's3' | 'web' | 'admin' | 'share';
export const AUDIT_DOORS: readonly AuditDoor[] = ['api', 'dav', 's3', 'web', 'admin', 'share'];

/** How an event ended: done, refused for want of a right or a valid credential, or failed otherwise. */
export type AuditOutcome = 'ok' | 'denied' | 'failed';

/** Where a caller came from: its door and its address (null when there is none, as for an admin command). */
export interface AuditVia {
  readonly door: AuditDoor;
  readonly address: string | null;
}

/** The actions recorded, one name each (see docs/operators.md, "Audit trail"). */
export const AUDIT_ACTIONS = [
  'login', 'logout', 'token.create', 'token.revoke', 's3key.create', 's3key.revoke',
  'upload', 'overwrite', 'mkdir', 'rename', 'move', 'copy',
  'trash', 'restore', 'purge', 'takedown',
  'acl.set', 'meta.add', 'meta.remove',
  'share.create', 'share.use', 'share.update', 'share.revoke', 'publish', 'unpublish',
  'admin',
] as const;
export type AuditAction = typeof AUDIT_ACTIONS[number];

/** A small flat object of facts about an event; never a secret. */
export type AuditDetail = Readonly<Record<string, string | number | boolean | null>>;

/** What a recorder says of an event; the store adds `seq`, the chain and the hashes. */
export interface AuditInput {
  at: Date;
  /** The user who acted; null when none is known (a failed sign-in for an unknown name keeps the name in `detail`). */
  actor: string | null;
  address: string | null;
  door: AuditDoor;
  action: AuditAction;
  path: string | null;
  detail: AuditDetail;
  outcome: AuditOutcome;
}

/** A stored record: the input, its place in the chain, the previous record's hash and its own. */
export interface AuditRecord extends AuditInput {
  seq: number;
  prevHash: string;
  hash: string;
}

/** The `prevHash` of the first record ever appended. */
export const AUDIT_GENESIS = '0'.repeat(64);

/** Which records `AuditStore.listAudit` returns. */
export interface AuditQuery {
  /** Only those with `seq` greater than this (paging). */
  after?: number | null;
  user?: string | null;
  /** Only those at this path or below it. */
  path?: string | null;
  action?: string | null;
  /** At or after. */
  since?: Date | null;
  /** Before. */
  until?: Date | null;
  limit: number;
}

/**
 * The audit trail's storage, a role of the catalog. Contract:
 * `test/contracts/catalog-audit-contract.ts`.
 */
export interface AuditStore {
  /**
   * Appends a record after the newest one: `seq` one more than its, `prevHash` its hash
   * (`AUDIT_GENESIS` for the first), `hash` as `auditHash` computes it. Appends are serial
   * across every process sharing the catalog, so the chain stays one line. Resolves with the
   * stored record once it is durable.
   */
  appendAudit(input: AuditInput): Promise<AuditRecord>;
  /** Up to `limit` records matching `query`, in `seq` order. */
  listAudit(query: AuditQuery): Promise<AuditRecord[]>;
  /**
   * Removes up to `limit` records older than `before`, oldest first, never the newest record
   * (the next append chains to it). The oldest record kept still names its predecessor's hash,
   * which is the anchor a verification starts from. Resolves with how many were removed.
   */
  pruneAudit(before: Date, limit: number): Promise<number>;
}

/** Sorts an object's keys, so that one detail hashes one way however it was built. */
function canonicalDetail(detail: AuditDetail): [string, string | number | boolean | null][] {
  return Object.keys(detail).sort().map((k) => [k, detail[k]!]);
}

/**
 * The hash of a record: SHA-256 (hex) over a canonical JSON array of every field but the hash
 * itself, `prevHash` included, so changing any field of any record, or removing or inserting
 * one, shows.
 */
export function auditHash(r: Omit<AuditRecord, 'hash'>): string {
  return createHash('sha256').update(`[${r.seq},${auditHashedContent(r)},${JSON.stringify(r.prevHash)}]`).digest('hex');
}

/**
 * The middle of the JSON array `auditHash` hashes: every field but `seq` and `prevHash`, which
 * only the head of the trail decides, so a catalog can finish the array where it reads the head
 * (`[` seq `,` this `,"` prevHash `"]`, in UTF-8).
 */
export function auditHashedContent(r: Omit<AuditRecord, 'hash' | 'seq' | 'prevHash'>): string {
  return JSON.stringify([r.at.getTime(), r.actor, r.address, r.door, r.action, r.path, canonicalDetail(r.detail), r.outcome]).slice(1, -1);
}

/** What `verifyAuditChain` found. */
export type ChainCheck =
  | { intact: true; count: number }
  | { intact: false; count: number; seq: number; reason: string };

/**
 * Walks records in `seq` order and checks that each one's hash is its own and that each names
 * the hash of the one before. The first record is trusted to name its predecessor (it is the
 * genesis or, after pruning, the anchor). Stops at the first broken record.
 */
export async function verifyAuditChain(records: AsyncIterable<AuditRecord>): Promise<ChainCheck> {
  let count = 0;
  let previous: AuditRecord | null = null;
  for await (const r of records) {
    if (previous && r.seq !== previous.seq + 1) return { intact: false, count, seq: r.seq, reason: `record ${previous.seq + 1} is missing` };
    if (previous && r.prevHash !== previous.hash) return { intact: false, count, seq: r.seq, reason: 'it does not chain to the record before it' };
    if (auditHash(r) !== r.hash) return { intact: false, count, seq: r.seq, reason: 'its content does not match its hash' };
    previous = r;
    count += 1;
  }
  return { intact: true, count };
}

/** Every record of `store` in `seq` order, read `page` at a time (memory stays flat). */
export async function* auditRecords(store: Pick<AuditStore, 'listAudit'>, query: Omit<AuditQuery, 'limit'> = {}, page = 1000): AsyncGenerator<AuditRecord> {
  let after = query.after ?? null;
  for (;;) {
    const rows = await store.listAudit({ ...query, after, limit: page });
    yield* rows;
    if (rows.length < page) return;
    after = rows[rows.length - 1]!.seq;
  }
}

/**
 * Removes the records older than `retentionSeconds` before `now` (none when it is 0), a batch
 * at a time, always keeping the newest record; resolves with how many went. Safe on every node
 * at once.
 */
export async function pruneAudit(store: Pick<AuditStore, 'pruneAudit'>, now: Date, retentionSeconds: number): Promise<number> {
  return pruneInBatches(now, retentionSeconds, (before, limit) => store.pruneAudit(before, limit));
}

/** Who acted, as the recorder needs it: an `Actor` has this shape. */
export interface AuditSubject {
  readonly user: string | null;
  readonly via?: AuditVia | undefined;
}

export interface AuditorOptions {
  store: AuditStore;
  clock: Clock;
  /** Told when a record could not be stored (the change it describes stands); the logger. */
  onError?: (err: unknown, input: AuditInput) => void;
}

/** The door of a subject without one: an operation the core starts itself (the retention sweep). */
const INTERNAL: AuditVia = { door: 'admin', address: null };

/**
 * Records events through an `AuditStore`. A record is written after the change it describes
 * has committed (or failed), and awaited, so the answer to the caller follows its record; when
 * the store refuses, `onError` hears of it and the operation's own result stands.
 */
export class Auditor {
  readonly #o: AuditorOptions;

  constructor(options: AuditorOptions) {
    this.#o = options;
  }

  /** Records one event of `subject`. Never rejects. */
  async record(subject: AuditSubject, action: AuditAction, path: string | null, outcome: AuditOutcome, detail: AuditDetail = {}): Promise<void> {
    const via = subject.via ?? INTERNAL;
    const input: AuditInput = { at: this.#o.clock.now(), actor: subject.user, address: via.address, door: via.door, action, path, detail, outcome };
    try {
      await this.#o.store.appendAudit(input);
    } catch (err) {
      this.#o.onError?.(err, input);
    }
  }

  /**
   * Runs `fn` and records its outcome (under `action` and `path`, or what they give once `fn` settled): `ok` with the detail `detailOf` gives of the result,
   * `denied` when it rejected with `FORBIDDEN`, `INVALID_CREDENTIAL` or `UNAUTHENTICATED`,
   * `failed` (with the error's code) otherwise. Resolves or rejects as `fn` did.
   */
  async track<T>(
    subject: AuditSubject, action: AuditAction | (() => AuditAction), path: string | null | (() => string | null), fn: () => Promise<T>,
    detailOf?: (result: T) => AuditDetail, base: AuditDetail = {},
  ): Promise<T> {
    const name = typeof action === 'function' ? action : () => action;
    const where = typeof path === 'function' ? path : () => path;
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      await this.record(subject, name(), where(), outcomeOf(err), { ...base, error: isLadingError(err) ? err.code : 'INTERNAL' });
      throw err;
    }
    await this.record(subject, name(), where(), 'ok', { ...base, ...detailOf?.(result) });
    return result;
  }
}

/** The outcome a rejection stands for. */
export function outcomeOf(err: unknown): AuditOutcome {
  return isLadingError(err) && (err.code === 'FORBIDDEN' || err.code === 'INVALID_CREDENTIAL' || err.code === 'UNAUTHENTICATED') ? 'denied' : 'failed';
}

/** An auditor that records nothing (for tests and tools that build services without a catalog). */
export const noAudit = { record: async () => {}, track: async <T>(_s: AuditSubject, _a: unknown, _p: string | null, fn: () => Promise<T>) => fn() } as unknown as Auditor;

/**
 * Reads of the audit trail, for administrators only: each method rejects with `FORBIDDEN`
 * unless `reader.admin`. Reading it is not itself recorded.
 */
export class AuditReader {
  readonly #store: Pick<AuditStore, 'listAudit'>;

  constructor(store: Pick<AuditStore, 'listAudit'>) {
    this.#store = store;
  }

  /** One page of records matching `query`, in `seq` order. `FORBIDDEN`. */
  async page(reader: { readonly admin: boolean }, query: AuditQuery): Promise<AuditRecord[]> {
    mustBeAdmin(reader);
    return this.#store.listAudit(query);
  }

  /** Every record matching `query`, in `seq` order, read a page at a time. `FORBIDDEN` (before anything is read). */
  records(reader: { readonly admin: boolean }, query: Omit<AuditQuery, 'limit'>): AsyncGenerator<AuditRecord> {
    mustBeAdmin(reader);
    return auditRecords(this.#store, query);
  }
}

function mustBeAdmin(reader: { readonly admin: boolean }): void {
  if (!reader.admin) throw new LadingError('FORBIDDEN', 'Only administrators may read the audit trail.');
}

/** A record as the API and the commands show it: snake_case, dates in ISO 8601. */
export function auditJson(r: AuditRecord) {
  return {
    seq: r.seq, at: r.at.toISOString(), user: r.actor, address: r.address, door: r.door, action: r.action, path: r.path,
    detail: r.detail, outcome: r.outcome, prev_hash: r.prevHash, hash: r.hash,
  };
}
