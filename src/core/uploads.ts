/**
 * Resumable uploads (the tus 1.0 protocol's use cases, without its HTTP words): creating an
 * upload aimed at a new data object, appending to it across requests and nodes, learning its
 * offset, terminating it, and completing it into a data object through the same commit as a
 * PUT. Bytes are acknowledged only once the resource holds them durably and the catalog has
 * recorded them, under a lease that keeps two requests from appending to one upload at once.
 * Permissions are the backend's; this module knows nothing of HTTP.
 */
import { type Hash, createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Actor, Backend } from './backend.ts';
import { BoundedCache } from './bounded-cache.ts';
import { LadingError, isLadingError } from './errors.ts';
import type { Observer } from './observer.ts';
import { checksumString } from './meter.ts';
import { type Path, childOf, parseName, parseNewPath, parsePath } from './path.ts';
import type { Catalog, Clock, Resource, StagedState, StagedWrites, UploadRecord } from './ports.ts';
import type { DataObject } from './types.ts';

/** Digest algorithms an append may be checked with (tus checksum extension). */
export const CHECKSUM_ALGORITHMS = ['sha256', 'sha1', 'md5'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

export interface ResumableUploadsOptions {
  backend: Backend;
  catalog: Catalog;
  resource: Resource;
  clock: Clock;
  /** Largest upload, in bytes. */
  maxUploadBytes: number;
  /** Open uploads a user may have at once. */
  maxOpen: number;
  /** Seconds an upload lives after its last activity (completed ones too, for their record). */
  expirySeconds: number;
  /** Bytes between two checkpoints of an append. */
  checkpointBytes: number;
  /** Seconds a request holds an upload's lease without renewing it. */
  leaseSeconds: number;
  /** How long a request waits for another's lease to be released before refusing, in ms (default 2000). */
  leaseWaitMs?: number;
  /** Told of each refusal by `maxOpen` (the metrics); none by default. */
  observer?: Pick<Observer, 'limited'>;
}

/** Where an upload goes, as its creator named it (tus `Upload-Metadata`). */
export interface UploadTarget {
  /** Absolute path of the data object to create. */
  path?: string;
  /** Collection to create it in (default: the caller's home), with `filename`. */
  collection?: string;
  filename?: string;
  /** Replace an existing data object. */
  force: boolean;
}

/** Bytes sent with a request, and what the request says of them. */
export interface AppendInput {
  source: Readable;
  /** The body's announced length, to refuse too much before reading it. */
  contentLength?: number;
  /** A digest of exactly these bytes: checked before they are acknowledged. */
  checksum?: { algorithm: ChecksumAlgorithm; digest: Buffer };
  /**
   * The SHA-256 of the whole upload (`Repr-Digest`), when the client knows it: checked when
   * this body brings the upload to its length, before its last bytes are acknowledged and the
   * data object is made. A body that leaves the upload short of its length cannot be checked
   * against it and ignores it.
   */
  whole?: Buffer;
}

/** An upload as its owner sees it. */
export interface UploadView {
  id: string;
  status: 'open' | 'complete';
  offset: number;
  length: number | null;
  metadata: string;
  path: Path;
  createdAt: Date;
  expiresAt: Date;
  /** The data object it became, once complete (null when the caller can no longer see it). */
  object: DataObject | null;
  /** Jobs its commit enqueued (PID registration), once complete. */
  jobIds: string[];
}

/** A running hash of an upload's acknowledged bytes, valid at `offset` only. */
interface HashAt {
  offset: number;
  hash: Hash;
}

// NOTE: a Hash's state is a few hundred bytes; this bounds the memory of idle uploads.
const HASH_CACHE_ENTRIES = 10_000;
const LEASE_POLL_MS = 100;

export class ResumableUploads {
  readonly #o: ResumableUploadsOptions;
  readonly #staging: StagedWrites | undefined;
  /**
   * SHA-256 of each upload's bytes so far, kept between requests: Node cannot serialise a hash
   * state, so a node that did not see the earlier bytes rebuilds it (see `#hashAt`).
   */
  readonly #hashes = new BoundedCache<string, HashAt>(HASH_CACHE_ENTRIES);
  /**
   * For each upload whose lease a request of this node could not release (the catalog refused
   * the write: its disk was full), the holder that still has it. That request has ended, so the
   * next request for the upload on this node takes the lease over as that holder at once,
   * instead of being refused until the lease runs out.
   */
  readonly #unreleased = new BoundedCache<string, string>(HASH_CACHE_ENTRIES);

  constructor(options: ResumableUploadsOptions) {
    this.#o = options;
    this.#staging = options.resource.staging;
  }

  /** Largest upload, in bytes. */
  get maxUploadBytes(): number {
    return this.#o.maxUploadBytes;
  }

  /**
   * Creates an upload of `length` bytes (null: the client tells it later) that becomes a data
   * object at `target`, checked as a PUT there would be, and appends `body` at once when given.
   * Rejects with `PAYLOAD_TOO_LARGE` (over the limit), `BAD_REQUEST` (no target named),
   * `INVALID_PATH`, `FORBIDDEN`, `NOT_FOUND` (no parent), `CONFLICT` (exists without `force`,
   * or is a collection), `NOT_A_COLLECTION`, `TOO_MANY_REQUESTS` (the user has `maxOpen` open
   * uploads; `details.retryAfter` says when one expires), `UNAVAILABLE` (the resource stores
   * no staged writes), and as `append` does for the body; when the body or the commit fails,
   * the upload is removed (its client never learnt where it is).
   */
  async create(actor: Actor, input: { length: number | null; metadata: string; target: UploadTarget; body?: AppendInput }): Promise<UploadView> {
    const staging = this.#requireStaging();
    if (input.length !== null && input.length > this.#o.maxUploadBytes) throw tooLarge(this.#o.maxUploadBytes);
    const path = this.#targetPath(actor, input.target);
    // NOTE: a deferred length is checked at each append (see `append`); the commit checks anyway.
    await this.#o.backend.checkUploadTarget(actor, path, input.target.force, input.length ?? 0);
    const now = this.#o.clock.now();
    const open = await this.#o.catalog.countOpenUploads(actor.user, now);
    if (open.count >= this.#o.maxOpen) {
      this.#o.observer?.limited?.('uploads_open');
      const wait = open.firstExpiry ? Math.ceil((open.firstExpiry.getTime() - now.getTime()) / 1000) : this.#o.expirySeconds;
      throw new LadingError('TOO_MANY_REQUESTS', `You have ${open.count} unfinished uploads, the most allowed; finish or terminate one (DELETE /api/uploads/<id>) first.`, {
        details: { retryAfter: Math.max(1, wait) },
      });
    }
    const id = randomUUID();
    const state = await staging.begin(id);
    const holder = randomUUID();
    try {
      await this.#o.catalog.createUpload({
        id, owner: actor.user, path, overwrite: input.target.force, length: input.length, metadata: input.metadata, blob: id,
        state: JSON.stringify(state), createdAt: now, expiresAt: this.#expiry(now), lease: { holder, until: this.#leaseEnd(now) },
      });
    } catch (err) {
      await staging.abort(id, state).catch(() => {});
      throw err;
    }
    this.#hashes.set(id, { offset: 0, hash: createHash('sha256') });
    try {
      let row = (await this.#o.catalog.getUpload(id))!;
      if (input.body) row = await this.#append(row, holder, input.body, () => this.#targetStillFree(actor, row));
      if (row.length === row.offset) await this.#finish(actor, row, holder, input.body?.whole);
    } catch (err) {
      // NOTE: a failed creation request never told its client where the upload is, so the
      // client cannot resume it: it goes, rather than count against the quota until it expires.
      const row = await this.#o.catalog.getUpload(id);
      if (row?.status === 'open') {
        await staging.abort(id, JSON.parse(row.state) as StagedState).catch(() => {});
        await this.#o.catalog.deleteUpload(id);
      }
      this.#hashes.delete(id);
      throw err;
    } finally {
      await this.#release(id, holder);
    }
    return this.#view(actor, (await this.#o.catalog.getUpload(id))!);
  }

  /**
   * Appends `body` to the upload `id` at `offset`, setting its length first when it was
   * deferred and `length` is given; when the upload then holds all its bytes it becomes the
   * data object. Bytes are acknowledged at checkpoints (every `checkpointBytes`, and at the
   * end of the body or when the body breaks off: what arrived is kept), or, with a checksum,
   * only after the whole body matched it. Rejects with `NOT_FOUND` (unknown, terminated,
   * expired, or another user's), `CONFLICT` (the offset is not the upload's, it is complete,
   * or another request is appending to it: `details.retryAfter` says in how many seconds its
   * lease ends), `BAD_REQUEST` (a length that contradicts the upload's or its offset),
   * `PAYLOAD_TOO_LARGE` (past the upload's length or the limit; what fitted is kept),
   * `CHECKSUM_MISMATCH` (nothing of the body is kept; or the whole upload is not `whole`: see
   * `AppendInput`), `INCOMPLETE_BODY`, `STORAGE_FULL`, and as the commit does (see `Backend.commitStagedAs`).
   */
  async append(actor: Actor, id: string, offset: number, body: AppendInput & { length?: number }): Promise<UploadView> {
    let row = await this.#owned(actor, id);
    if (row.status === 'complete') throw new LadingError('CONFLICT', 'This upload is complete already.');
    // NOTE: the lease first, so that a request racing one still running learns that, and
    // then the offset as that one left it.
    const holder = await this.#claim(id);
    try {
      row = (await this.#o.catalog.getUpload(id))!;
      if (row.offset !== offset) {
        throw new LadingError('CONFLICT', `Upload-Offset ${offset} is not the upload's offset, ${row.offset}; ask for it with HEAD and resume from there.`, { details: { offset: row.offset } });
      }
      if (body.length !== undefined && body.length !== row.length) {
        if (row.length !== null) throw new LadingError('BAD_REQUEST', `Upload-Length ${body.length} contradicts the upload's length, ${row.length}.`);
        if (body.length > this.#o.maxUploadBytes) throw tooLarge(this.#o.maxUploadBytes);
        if (body.length < row.offset) throw new LadingError('BAD_REQUEST', `Upload-Length ${body.length} is less than the ${row.offset} bytes received.`);
        if (!(await this.#o.catalog.setUploadLength(id, holder, body.length))) throw leaseLost();
        row = { ...row, length: body.length };
      }
      const current = row;
      if (row.length === null) await this.#o.backend.checkUploadTarget(actor, row.path, row.overwrite, row.offset + (body.contentLength ?? 0));
      row = await this.#append(row, holder, body, () => this.#targetStillFree(actor, current));
      if (row.length === row.offset) await this.#finish(actor, row, holder, body.whole);
    } finally {
      await this.#release(id, holder);
    }
    return this.#view(actor, (await this.#o.catalog.getUpload(id))!);
  }

  /**
   * The upload `id` of `actor`. An upload that holds all its bytes but was not yet committed
   * (its node died in between) is committed first, unless another request holds it. Rejects
   * with `NOT_FOUND` (unknown, terminated, expired, or another user's).
   */
  async get(actor: Actor, id: string): Promise<UploadView> {
    const row = await this.#owned(actor, id);
    if (row.status === 'open' && row.length === row.offset) {
      const holder = randomUUID();
      if (await this.#o.catalog.claimUpload(id, holder, this.#o.clock.now(), this.#leaseEnd(this.#o.clock.now()))) {
        try {
          await this.#finish(actor, (await this.#o.catalog.getUpload(id))!, holder);
        } catch {
          // NOTE: the commit is refused (the target appeared, access was withdrawn) or a
          // dependency failed: the upload is reported as it is; the next look tries again.
        } finally {
          await this.#release(id, holder);
        }
      }
      return this.#view(actor, (await this.#o.catalog.getUpload(id))!);
    }
    return this.#view(actor, row);
  }

  /** The open uploads of `actor`, oldest first (expired ones excluded). */
  async list(actor: Actor): Promise<UploadView[]> {
    const now = this.#o.clock.now().getTime();
    // NOTE: rows of S3 multipart uploads (`multipart.ts`) share the table; they are not tus uploads.
    const rows = (await this.#o.catalog.listUploads(actor.user)).filter((u) => u.expiresAt.getTime() >= now && !u.metadata.startsWith('s3-'));
    return Promise.all(rows.map((row) => this.#view(actor, row)));
  }

  /**
   * Terminates the upload `id`: an open one's bytes are removed (waiting a moment for a
   * request still appending to it to let go); a complete one's record goes, its data object
   * stays. Rejects with `NOT_FOUND` and `CONFLICT` (another request keeps appending).
   */
  async terminate(actor: Actor, id: string): Promise<void> {
    const row = await this.#owned(actor, id);
    if (row.status === 'complete') {
      await this.#o.catalog.deleteUpload(id);
      return;
    }
    const holder = await this.#claim(id);
    try {
      const current = (await this.#o.catalog.getUpload(id))!;
      await this.#requireStaging().abort(current.blob, JSON.parse(current.state) as StagedState);
      await this.#o.catalog.deleteUpload(id);
    } catch (err) {
      await this.#release(id, holder);
      throw err;
    }
    this.#hashes.delete(id);
    this.#unreleased.delete(id);
  }

  /**
   * Removes uploads expired at `now`: an open one with its staged bytes (unless a request still
   * holds its lease), a complete one's record. Safe on every node at once. Returns how many.
   */
  async sweepExpired(now: Date): Promise<number> {
    let removed = 0;
    for (;;) {
      const expired = await this.#o.catalog.expiredUploads(now, 100);
      let progressed = false;
      for (const row of expired) {
        if (row.status === 'open') {
          const holder = randomUUID();
          if (!(await this.#o.catalog.claimUpload(row.id, holder, now, this.#leaseEnd(now)))) continue;
          await this.#staging?.abort(row.blob, JSON.parse(row.state) as StagedState);
        }
        if (await this.#o.catalog.deleteUpload(row.id)) {
          removed++;
          progressed = true;
        }
        this.#hashes.delete(row.id);
      }
      if (expired.length < 100 || !progressed) return removed;
    }
  }

  #requireStaging(): StagedWrites {
    if (!this.#staging) throw new LadingError('UNAVAILABLE', `The ${this.#o.resource.driver} resource does not support resumable uploads.`);
    return this.#staging;
  }

  #expiry(now: Date): Date {
    return new Date(now.getTime() + this.#o.expirySeconds * 1000);
  }

  #leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.#o.leaseSeconds * 1000);
  }

  /** The path `target` names. `BAD_REQUEST`, `INVALID_PATH`. */
  #targetPath(actor: Actor, target: UploadTarget): Path {
    if (target.path !== undefined) return parseNewPath(parsePath(target.path));
    if (target.filename !== undefined) {
      const collection = target.collection !== undefined ? parsePath(target.collection) : this.#o.backend.homeOf(actor.user);
      return parseNewPath(childOf(collection, parseName(target.filename)));
    }
    throw new LadingError('BAD_REQUEST', 'Name the data object to create in Upload-Metadata: `path` (absolute), or `filename` (and `collection`, default your home).');
  }

  /** The live upload `id` of `actor`; `NOT_FOUND` otherwise. */
  async #owned(actor: Actor, id: string): Promise<UploadRecord> {
    const row = await this.#o.catalog.getUpload(id);
    if (!row || row.owner !== actor.user || row.expiresAt.getTime() < this.#o.clock.now().getTime()) {
      throw new LadingError('NOT_FOUND', `No upload ${id}: it does not exist, was terminated or has expired.`);
    }
    return row;
  }

  /**
   * Takes the lease of `id` for a new holder (or for the holder of an ended request of this
   * node that could not release it), waiting up to `leaseWaitMs` for it. `CONFLICT`.
   */
  async #claim(id: string): Promise<string> {
    // NOTE: taken out of the map before the first await, so that one request only takes over.
    const left = this.#unreleased.get(id);
    this.#unreleased.delete(id);
    const holder = left ?? randomUUID();
    const deadline = Date.now() + (this.#o.leaseWaitMs ?? 2000);
    for (;;) {
      const now = this.#o.clock.now();
      let claimed: boolean;
      try {
        claimed = await this.#o.catalog.claimUpload(id, holder, now, this.#leaseEnd(now));
      } catch (err) {
        // NOTE: the catalog refused the claim (its disk is still full): the lease is as it was.
        if (left !== undefined) this.#unreleased.set(id, left);
        throw err;
      }
      if (claimed) return holder;
      const row = await this.#o.catalog.getUpload(id);
      if (!row) throw new LadingError('NOT_FOUND', `No upload ${id}: it was terminated meanwhile.`);
      if (row.status === 'complete') throw new LadingError('CONFLICT', 'This upload is complete already.');
      if (Date.now() >= deadline) {
        // NOTE: the holder may be a node that died mid-request: its lease then ends on its own,
        // and the client learns when (Retry-After) instead of guessing.
        const seconds = row.leaseUntil ? Math.ceil((row.leaseUntil.getTime() - now.getTime()) / 1000) : 1;
        throw new LadingError('CONFLICT', 'An upload request is already running for this upload; retry when it has ended.', { details: { retryAfter: Math.max(1, seconds) } });
      }
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    }
  }

  /**
   * Releases the lease of `holder` on `id`. Never rejects: the request's own outcome is what its
   * client must learn. When the catalog refuses the write (a full disk), the holder is kept in
   * `#unreleased`, for the next request on this node to take over.
   */
  async #release(id: string, holder: string): Promise<void> {
    try {
      await this.#o.catalog.releaseUpload(id, holder);
    } catch {
      this.#unreleased.set(id, holder);
    }
  }

  /**
   * The SHA-256 of the first `row.offset` bytes of the upload, or null when it cannot be had
   * before completion. From memory when this node saw those bytes; otherwise rebuilt by
   * reading them back where the resource can (a local read of the staged file); else null,
   * and `#finish` reads the completed object once instead.
   */
  async #hashAt(row: UploadRecord): Promise<Hash | null> {
    const cached = this.#hashes.get(row.id);
    if (cached && cached.offset === row.offset) return cached.hash.copy();
    const staging = this.#requireStaging();
    if (!staging.readStaged) return null;
    const hash = createHash('sha256');
    for await (const chunk of await staging.readStaged(row.blob, JSON.parse(row.state) as StagedState, row.offset)) hash.update(chunk as Buffer);
    return hash;
  }

  /**
   * Checks, before the last bytes of `row` are acknowledged, that its commit would be accepted.
   * NOTE: a tus client that sees `Upload-Offset` equal to `Upload-Length` takes the upload for
   * done, so last bytes whose commit is bound to be refused (the name was taken meanwhile, access
   * withdrawn) are not acknowledged: the client keeps getting the refusal instead of a false
   * success. Only a commit refused in the moment between this check and the commit leaves all
   * bytes recorded; `get` commits such an upload once it can.
   */
  async #targetStillFree(actor: Actor, row: UploadRecord): Promise<void> {
    await this.#o.backend.checkUploadTarget(actor, row.path, row.overwrite, row.length ?? undefined);
  }

  /**
   * Appends `body` to the upload `row` under the lease of `holder`; resolves with the row as
   * recorded. `beforeLast` runs before the checkpoint that would record the upload's last byte;
   * when it rejects, that checkpoint's bytes are not kept and the rejection is the answer.
   */
  async #append(row: UploadRecord, holder: string, body: AppendInput, beforeLast: () => Promise<void>): Promise<UploadRecord> {
    const staging = this.#requireStaging();
    const limit = row.length ?? this.#o.maxUploadBytes;
    if (body.contentLength !== undefined && row.offset + body.contentLength > limit) {
      throw row.length === null ? tooLarge(limit) : new LadingError('PAYLOAD_TOO_LARGE', `The body would take the upload past its length of ${row.length} bytes.`);
    }
    const running = await this.#hashAt(row);
    const digest = body.checksum ? createHash(body.checksum.algorithm) : null;
    const leaseMs = this.#o.leaseSeconds * 1000;
    let leaseUntil = this.#o.clock.now().getTime() + leaseMs;
    let ended = false;
    let taken = row.offset;
    let recorded = row;
    const clock = this.#o.clock;
    const catalog = this.#o.catalog;
    const keepLease = async (): Promise<void> => {
      const now = clock.now().getTime();
      // NOTE: renewed well before it ends, and checked before every chunk is handed on, so a
      // request that lost its lease (stalled past it) writes nothing more.
      if (now < leaseUntil - leaseMs / 2) return;
      if (!(await catalog.renewUpload(row.id, holder, new Date(now + leaseMs)))) throw leaseLost();
      leaseUntil = now + leaseMs;
    };
    async function* feed(): AsyncGenerator<Buffer> {
      for await (const data of body.source) {
        let chunk = data as Buffer;
        let over = false;
        if (taken + chunk.length > limit) {
          chunk = chunk.subarray(0, limit - taken);
          over = true;
        }
        if (chunk.length > 0) {
          await keepLease();
          running?.update(chunk);
          digest?.update(chunk);
          taken += chunk.length;
          yield chunk;
        }
        if (over) {
          throw row.length === null ? tooLarge(limit) : new LadingError('PAYLOAD_TOO_LARGE', `The body goes past the upload's length of ${row.length} bytes; the bytes up to it were kept.`);
        }
      }
      ended = true;
    }
    const onCheckpoint = async (offset: number, state: StagedState): Promise<void> => {
      if (body.checksum) {
        if (!ended) throw new LadingError('INCOMPLETE_BODY', 'The body ended before it was complete; nothing of it was kept (it came with Upload-Checksum).');
        const actual = digest!.digest();
        if (!actual.equals(body.checksum.digest)) {
          throw new LadingError('CHECKSUM_MISMATCH', `The ${body.checksum.algorithm} digest of the body (${actual.toString('base64')}) is not the one Upload-Checksum announced (${body.checksum.digest.toString('base64')}); nothing of it was kept.`);
        }
      }
      if (offset === row.length) {
        // NOTE: where this node has the hash of every byte, a whole upload that differs from
        // the client's keeps the upload open short of its last bytes; where it has not (S3
        // parts, resumed on another node), `#finish` checks it once the bytes are readable.
        if (body.whole && running) {
          const actual = running.copy().digest();
          if (!actual.equals(body.whole)) throw wholeMismatch(body.whole, actual, false);
        }
        await beforeLast();
      }
      const now = clock.now();
      const text = JSON.stringify(state);
      const lease = new Date(now.getTime() + leaseMs);
      if (!(await catalog.checkpointUpload(row.id, holder, { offset, state: text, now, expiresAt: this.#expiry(now), leaseUntil: lease }))) throw leaseLost();
      leaseUntil = lease.getTime();
      recorded = { ...recorded, offset, state: text, updatedAt: now, expiresAt: this.#expiry(now) };
      if (running) this.#hashes.set(row.id, { offset, hash: running.copy() });
      else this.#hashes.delete(row.id);
    };
    try {
      await staging.append(row.blob, JSON.parse(row.state) as StagedState, row.offset, feed(), {
        // NOTE: with a checksum, the bytes are acknowledged only once all of them matched.
        checkpointBytes: body.checksum ? Infinity : this.#o.checkpointBytes,
        onCheckpoint,
      });
    } catch (err) {
      if (isLadingError(err)) throw err;
      throw new LadingError('INCOMPLETE_BODY', `The body broke off; the upload holds the ${recorded.offset} bytes acknowledged.`, { cause: err });
    }
    return recorded;
  }

  /**
   * Completes the staged write of `row` (all its bytes are recorded) and commits its data
   * object. When its SHA-256 is not `whole` (the client's), the upload is removed with its
   * bytes instead, and the rejection (`CHECKSUM_MISMATCH`) says so.
   */
  async #finish(actor: Actor, row: UploadRecord, holder: string, whole?: Buffer): Promise<void> {
    const staging = this.#requireStaging();
    const length = row.offset;
    await staging.complete(row.blob, JSON.parse(row.state) as StagedState, length);
    let hash = await this.#hashAt(row).catch(() => null);
    if (!hash) {
      // NOTE: no node could keep the hash across the appends (S3 parts cannot be read before
      // completion), so the completed object is read once.
      hash = createHash('sha256');
      for await (const chunk of await this.#o.resource.read(row.blob)) hash.update(chunk as Buffer);
    }
    const digest = hash.digest();
    if (whole && !digest.equals(whole)) {
      await staging.abort(row.blob, JSON.parse(row.state) as StagedState);
      await this.#o.catalog.deleteUpload(row.id);
      this.#hashes.delete(row.id);
      throw wholeMismatch(whole, digest, true);
    }
    await this.#o.backend.commitStagedAs(actor, {
      path: row.path, blob: row.blob, size: length, checksum: checksumString(digest), overwrite: row.overwrite,
      upload: { id: row.id, holder, expiresAt: this.#expiry(this.#o.clock.now()) },
    });
    this.#hashes.delete(row.id);
  }

  async #view(actor: Actor, row: UploadRecord): Promise<UploadView> {
    let object: DataObject | null = null;
    if (row.status === 'complete' && row.entityId) {
      const entity = await this.#o.catalog.getEntityById(row.entityId);
      if (entity?.kind === 'dataobject' && (await this.#o.backend.levelOf(actor, entity.path)) !== null) object = entity;
    }
    return {
      id: row.id, status: row.status, offset: row.offset, length: row.length, metadata: row.metadata, path: object?.path ?? row.path,
      createdAt: row.createdAt, expiresAt: row.expiresAt, object, jobIds: row.jobIds,
    };
  }
}

function tooLarge(limit: number): LadingError {
  return new LadingError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${limit} bytes.`);
}

/** The whole upload is not what the client's `Repr-Digest` names; `removed`: it was deleted. */
function wholeMismatch(announced: Buffer, actual: Buffer, removed: boolean): LadingError {
  const what = `The SHA-256 of the whole upload (${actual.toString('base64')}) is not the one Repr-Digest announced (${announced.toString('base64')})`;
  return new LadingError('CHECKSUM_MISMATCH', removed
    ? `${what}: the upload was removed with its bytes and no data object was made; start a new upload.`
    : `${what}: the last bytes were not kept and no data object was made; send them again from the upload's offset, or, if the earlier bytes are the damaged ones, terminate the upload and start a new one.`);
}

function leaseLost(): LadingError {
  return new LadingError('CONFLICT', 'Another upload request took this upload over; this one stopped.');
}
