/**
 * Uploads in parts that may arrive in any order, on any node, and become one data object when
 * the client completes them (S3's multipart uploads), on the staged-upload machinery of the
 * resumable uploads: each part is a staged write of the resource (`StagedWrites`) recorded as
 * an upload row of the catalog (`UploadStore`), so the expiry sweep of resumable uploads
 * removes what a client abandons, with its bytes. Completing streams the parts, in order,
 * through the same commit as any upload (`Backend.uploadAs`: hashes, rules, PID jobs, atomic
 * visibility). The MD5 of each part is computed as it streams; the object's entity tag is
 * S3's `<MD5 of the parts' MD5s>-<parts>`. Speaks no HTTP.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Actor, Backend } from './backend.ts';
import { UPLOAD_PART } from './catalog.ts';
import { LadingError } from './errors.ts';
import { Meter } from './meter.ts';
import type { Path } from './path.ts';
import type { Clock, Resource, StagedState, UploadRecord, UploadStore } from './ports.ts';
import type { Avu, DataObject } from './types.ts';

/** The `metadata` of an upload row that is a multipart upload (the rows of its parts: `PART`). */
const UPLOAD = 's3-multipart';
const PART = UPLOAD_PART;

/** Smallest part but the last (S3's bound). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** Most parts of one upload (S3's bound). */
export const MAX_PARTS = 10_000;

export interface MultipartOptions {
  backend: Pick<Backend, 'checkUploadTarget' | 'uploadAs'>;
  catalog: UploadStore;
  resource: Pick<Resource, 'staging' | 'read'>;
  clock: Clock;
  maxUploadBytes: number;
  /** Unfinished uploads a user may have at once (`uploads.max_open`), resumable ones and these together; each counts once, whatever its parts. */
  maxOpen?: number;
  /** Seconds an upload is kept after its last part arrived (`uploads.expiry`). */
  expirySeconds: number;
}

/** A multipart upload as its owner lists it. */
export interface MultipartView {
  id: string;
  path: Path;
  createdAt: Date;
}

/** A stored part. */
export interface PartView {
  number: number;
  size: number;
  /** Hex MD5 of its bytes. */
  md5: string;
  modifiedAt: Date;
}

interface Stored {
  meta: Avu[];
}

export class MultipartUploads {
  readonly #o: MultipartOptions;

  constructor(options: MultipartOptions) {
    this.#o = options;
  }

  #staging() {
    const staging = this.#o.resource.staging;
    if (!staging) throw new LadingError('NOT_IMPLEMENTED', 'This resource stores no staged writes, so uploads in parts are not available.');
    return staging;
  }

  #expiry(): Date {
    return new Date(this.#o.clock.now().getTime() + this.#o.expirySeconds * 1000);
  }

  /**
   * Starts an upload that will become the data object at `path` (over an existing one), with
   * the user metadata `meta`. Checked as an upload there would be: `FORBIDDEN`, `CONFLICT` (a
   * collection), `NOT_FOUND` (no parent), `NOT_A_COLLECTION`; `TOO_MANY_REQUESTS` when the user
   * has `maxOpen` unfinished uploads (this one counts once, whatever its parts).
   */
  async create(actor: Actor, path: Path, meta: Avu[]): Promise<string> {
    await this.#o.backend.checkUploadTarget(actor, path, true);
    const now0 = this.#o.clock.now();
    const open = this.#o.maxOpen === undefined ? null : await this.#o.catalog.countOpenUploads(actor.user, now0);
    if (open && open.count >= this.#o.maxOpen!) {
      const wait = open.firstExpiry ? Math.ceil((open.firstExpiry.getTime() - now0.getTime()) / 1000) : this.#o.expirySeconds;
      throw new LadingError('TOO_MANY_REQUESTS', `You have ${open.count} unfinished uploads, the most allowed; complete or abort one first.`, { details: { retryAfter: Math.max(1, wait) } });
    }
    const id = `s3${randomUUID().replaceAll('-', '')}`;
    const blob = randomUUID();
    const state = await this.#staging().begin(blob);
    const now = this.#o.clock.now();
    await this.#o.catalog.createUpload({
      id, owner: actor.user, path, overwrite: true, length: null, metadata: `${UPLOAD} ${JSON.stringify({ meta } satisfies Stored)}`,
      blob, state: JSON.stringify(state), createdAt: now, expiresAt: this.#expiry(),
    });
    return id;
  }

  /** The open upload `id` of `actor` (for `path`, when given). `NOT_FOUND` otherwise (S3's NoSuchUpload). */
  async #upload(actor: Actor, id: string, path?: Path): Promise<UploadRecord> {
    const row = /^s3[0-9a-f]{32}$/.test(id) ? await this.#o.catalog.getUpload(id) : null;
    if (!row || row.owner !== actor.user || row.status !== 'open' || !row.metadata.startsWith(`${UPLOAD} `) || (path !== undefined && row.path !== path)) {
      throw new LadingError('NOT_FOUND', 'The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', { details: { upload: true } });
    }
    return row;
  }

  async #parts(actor: Actor, id: string): Promise<UploadRecord[]> {
    return (await this.#o.catalog.listUploads(actor.user)).filter((r) => r.metadata === PART && r.id.startsWith(`${id}.`) && r.status === 'open');
  }

  /**
   * Stores part `number` of the upload `id` from `source`, replacing an earlier one of the same
   * number once it is whole; resolves with its size and MD5. `expected` digests are checked
   * before the part is kept (`DIGEST_MISMATCH`), and so is `verify` (a front's own checks).
   * `NOT_FOUND` (no such upload), `BAD_REQUEST` (number out of 1–10,000), `PAYLOAD_TOO_LARGE`.
   */
  async putPart(actor: Actor, id: string, path: Path, number: number, source: Readable, options: {
    expected?: { md5?: Buffer; sha256?: Buffer }; verify?: (digests: { size: number; sha256: Buffer; md5: Buffer }) => void;
  }): Promise<PartView> {
    if (!Number.isInteger(number) || number < 1 || number > MAX_PARTS) throw new LadingError('BAD_REQUEST', `Part numbers go from 1 to ${MAX_PARTS}.`);
    await this.#upload(actor, id, path);
    const staging = this.#staging();
    const blob = randomUUID();
    const partId = `${id}.${number}.${randomUUID().slice(0, 8)}`;
    const holder = randomUUID();
    const now = this.#o.clock.now();
    let state: StagedState = await staging.begin(blob);
    await this.#o.catalog.createUpload({
      id: partId, owner: actor.user, path, overwrite: true, length: null, metadata: PART, blob, state: JSON.stringify(state),
      createdAt: now, expiresAt: this.#expiry(), lease: { holder, until: new Date(now.getTime() + 86400_000) },
    });
    const meter = new Meter({ limit: this.#o.maxUploadBytes, md5: true });
    source.on('error', (err) => meter.destroy(err));
    source.pipe(meter);
    try {
      const written = await staging.append(blob, state, 0, meter, {
        checkpointBytes: Infinity,
        onCheckpoint: async (offset, at) => {
          state = at;
          await this.#o.catalog.checkpointUpload(partId, holder, { offset, state: JSON.stringify(at), now: this.#o.clock.now(), expiresAt: this.#expiry(), leaseUntil: new Date(Date.now() + 86400_000) });
        },
      });
      state = written.state;
      const { size, sha256, md5 } = meter.result;
      const e = options.expected;
      if (e?.md5 && !e.md5.equals(md5!)) throw new LadingError('DIGEST_MISMATCH', 'The Content-MD5 you specified did not match what was received; the part was not kept.');
      if (e?.sha256 && !e.sha256.equals(sha256)) throw new LadingError('DIGEST_MISMATCH', 'The SHA-256 you specified did not match what was received; the part was not kept.');
      options.verify?.({ size, sha256, md5: md5! });
      await staging.complete(blob, state, size);
      const recorded = { ...state, partMd5: md5!.toString('hex') };
      if (!(await this.#o.catalog.checkpointUpload(partId, holder, { offset: size, state: JSON.stringify(recorded), now: this.#o.clock.now(), expiresAt: this.#expiry(), leaseUntil: new Date(Date.now() + 86400_000) }))) {
        throw new LadingError('CONFLICT', 'The part could not be recorded; send it again.');
      }
      await this.#o.catalog.releaseUpload(partId, holder);
      // NOTE: the newest part of a number wins; earlier ones (a retry) go with their bytes.
      for (const old of await this.#parts(actor, id)) {
        if (old.id !== partId && partNumberOf(old) === number) await this.#drop(old);
      }
      return { number, size, md5: md5!.toString('hex'), modifiedAt: this.#o.clock.now() };
    } catch (err) {
      meter.destroy();
      await staging.abort(blob, state).catch(() => {});
      await this.#o.catalog.deleteUpload(partId).catch(() => {});
      throw err;
    }
  }

  async #drop(row: UploadRecord): Promise<void> {
    await this.#staging().abort(row.blob, JSON.parse(row.state) as StagedState).catch(() => {});
    await this.#o.catalog.deleteUpload(row.id);
  }

  /** The parts of the upload `id`, by number. `NOT_FOUND`. */
  async listParts(actor: Actor, id: string, path: Path): Promise<PartView[]> {
    await this.#upload(actor, id, path);
    return latest(await this.#parts(actor, id)).map(partView);
  }

  /** The open multipart uploads of `actor`, oldest first. */
  async list(actor: Actor): Promise<MultipartView[]> {
    const now = this.#o.clock.now().getTime();
    return (await this.#o.catalog.listUploads(actor.user))
      .filter((r) => r.metadata.startsWith(`${UPLOAD} `) && r.status === 'open' && r.expiresAt.getTime() >= now)
      .map((r) => ({ id: r.id, path: r.path, createdAt: r.createdAt }));
  }

  /** Aborts the upload `id`: its parts go, with their bytes. `NOT_FOUND`. */
  async abort(actor: Actor, id: string, path: Path): Promise<void> {
    const row = await this.#upload(actor, id, path);
    for (const part of await this.#parts(actor, id)) await this.#drop(part);
    await this.#drop(row);
  }

  /**
   * Makes the data object of the upload `id` from the parts `parts` (numbers ascending, each
   * with the MD5 its upload answered), through the same commit as an upload; the parts go
   * afterwards. `BAD_REQUEST` with `details.s3` naming S3's code: `InvalidPartOrder`,
   * `InvalidPart` (missing or another MD5), `EntityTooSmall` (a part but the last under 5 MiB).
   * `NOT_FOUND`, and what `Backend.uploadAs` rejects with. `onJoining` is called once the parts
   * were found good, as the (long) joining starts. `options.meta` gives further AVUs from the
   * parts' sizes; `options.replaceMeta`, attributes an overwritten object loses first.
   */
  async complete(
    actor: Actor, id: string, path: Path, parts: { number: number; md5: string }[], onJoining: () => void = () => {},
    options: { replaceMeta?: readonly string[]; meta?: (sizes: number[]) => Avu[] } = {},
  ): Promise<{ object: DataObject; jobIds: string[] }> {
    const row = await this.#upload(actor, id, path);
    if (parts.length === 0) throw new LadingError('BAD_REQUEST', 'You must specify at least one part.', { details: { s3: 'MalformedXML' } });
    const stored = new Map(latest(await this.#parts(actor, id)).map((p) => [partNumberOf(p), p]));
    const chosen: UploadRecord[] = [];
    for (const [i, part] of parts.entries()) {
      if (i > 0 && part.number <= parts[i - 1]!.number) throw new LadingError('BAD_REQUEST', 'The list of parts was not in ascending order.', { details: { s3: 'InvalidPartOrder' } });
      const have = stored.get(part.number);
      if (!have || partMd5Of(have) !== part.md5) throw new LadingError('BAD_REQUEST', `Part ${part.number} could not be found, or its ETag does not match.`, { details: { s3: 'InvalidPart' } });
      if (i < parts.length - 1 && have.offset < MIN_PART_BYTES) throw new LadingError('BAD_REQUEST', `Part ${part.number} is smaller than the minimum of 5 MiB.`, { details: { s3: 'EntityTooSmall' } });
      chosen.push(have);
    }
    const etag = `${createHash('md5').update(Buffer.concat(chosen.map((p) => Buffer.from(partMd5Of(p), 'hex')))).digest('hex')}-${chosen.length}`;
    const read = this.#o.resource.read.bind(this.#o.resource);
    const body = Readable.from((async function* () {
      for (const part of chosen) yield* await read(part.blob) as AsyncIterable<Buffer>;
    })(), { objectMode: false });
    const { meta } = JSON.parse(row.metadata.slice(UPLOAD.length + 1)) as Stored;
    onJoining();
    const more = options.meta?.(chosen.map((p) => p.offset)) ?? [];
    const outcome = await this.#o.backend.uploadAs(actor, path, body, {
      overwrite: true, meta: [...meta, ...more], etag, ...(options.replaceMeta ? { replaceMeta: options.replaceMeta } : {}),
    });
    for (const part of await this.#parts(actor, id)) await this.#drop(part).catch(() => {});
    await this.#drop(row).catch(() => {});
    return outcome;
  }
}

function partNumberOf(row: UploadRecord): number {
  return Number(row.id.split('.')[1]);
}

function partMd5Of(row: UploadRecord): string {
  return String((JSON.parse(row.state) as { partMd5?: string }).partMd5 ?? '');
}

/** The finished parts, the newest of each number, by number. */
function latest(rows: UploadRecord[]): UploadRecord[] {
  const byNumber = new Map<number, UploadRecord>();
  for (const row of rows) {
    if (partMd5Of(row) === '') continue;
    const n = partNumberOf(row);
    const had = byNumber.get(n);
    if (!had || had.updatedAt.getTime() <= row.updatedAt.getTime()) byNumber.set(n, row);
  }
  return [...byNumber.values()].sort((a, b) => partNumberOf(a) - partNumberOf(b));
}

function partView(row: UploadRecord): PartView {
  return { number: partNumberOf(row), size: row.offset, md5: partMd5Of(row), modifiedAt: row.updatedAt };
}


