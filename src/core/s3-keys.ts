/**
 * S3 access keys: a user makes, lists and revokes the key pairs the S3 front accepts, and the
 * front resolves a key id to the actor it stands for and the secret that verifies a signature.
 * The secret is shown once, at creation, and kept sealed under the master key (SigV4 needs it
 * back, so it cannot be hashed). Every resolution reads the catalog, so a revoked key or a
 * disabled user is refused at the next request on every node. Speaks no HTTP and no SigV4.
 */
import { randomBytes } from 'node:crypto';
import type { Actor, Backend } from './backend.ts';
import { type AuditVia, type Auditor, noAudit } from './audit.ts';
import { LadingError } from './errors.ts';
import type { Clock, S3KeyStore } from './ports.ts';

/** Encryption at rest of the secrets (the identity room's sealer, structurally). */
export interface SecretSealer {
  seal(plaintext: string | Buffer, purpose: string): string;
  open(sealed: string, purpose: string): Buffer;
}

/** Keys one user may hold at once; one more is refused (`TOO_MANY_REQUESTS`). */
export const MAX_S3_KEYS_PER_USER = 20;

/** Longest label of a key. */
export const MAX_S3_KEY_LABEL = 200;

const PURPOSE = 's3-secret-access-key';

/** A key as its owner sees it in a list: never the secret. */
export interface S3KeyView {
  id: string;
  label: string | null;
  createdAt: Date;
}

export interface S3KeysOptions {
  catalog: S3KeyStore;
  backend: Pick<Backend, 'actorFor'>;
  sealer: SecretSealer;
  clock: Clock;
  /** The audit trail key creation and revocation are recorded in; none when absent. */
  trail?: Auditor;
}

/** An access key id: `LK` and 18 upper-case letters and digits (20 characters, as AWS's). */
const KEY_ID = /^LK[A-Z2-7]{18}$/;

export class S3Keys {
  readonly #o: S3KeysOptions;

  constructor(options: S3KeysOptions) {
    this.#o = options;
  }

  /**
   * Makes a key pair for `actor.user`; the secret is in the answer and nowhere else in the
   * clear. `BAD_REQUEST` (label too long), `TOO_MANY_REQUESTS` (`MAX_S3_KEYS_PER_USER`).
   */
  async create(actor: Actor, label: string | null = null): Promise<S3KeyView & { secret: string }> {
    // NOTE: the record names the key's public id, never its secret.
    return (this.#o.trail ?? noAudit).track(actor, 's3key.create', null, () => this.#create(actor, label), (k) => ({ key: k.id, label }));
  }

  async #create(actor: Actor, label: string | null): Promise<S3KeyView & { secret: string }> {
    if (label !== null && label.length > MAX_S3_KEY_LABEL) throw new LadingError('BAD_REQUEST', `The label is longer than ${MAX_S3_KEY_LABEL} characters.`);
    const { catalog, sealer, clock } = this.#o;
    if ((await catalog.listS3Keys(actor.user)).length >= MAX_S3_KEYS_PER_USER) {
      throw new LadingError('TOO_MANY_REQUESTS', `You hold ${MAX_S3_KEYS_PER_USER} S3 keys already; revoke one first.`);
    }
    const id = `LK${base32(randomBytes(12)).slice(0, 18)}`;
    // NOTE: 30 bytes of randomness in 40 characters of base64url, the length of an AWS secret.
    const secret = randomBytes(30).toString('base64url');
    const createdAt = clock.now();
    await catalog.createS3Key({ id, user: actor.user, secret: sealer.seal(secret, PURPOSE), label, createdAt });
    return { id, label, createdAt, secret };
  }

  /** The keys of `actor.user`, oldest first, without their secrets. */
  async list(actor: Actor): Promise<S3KeyView[]> {
    return (await this.#o.catalog.listS3Keys(actor.user)).map(({ id, label, createdAt }) => ({ id, label, createdAt }));
  }

  /** Revokes `actor.user`'s key `id`, at once for every node. `NOT_FOUND` when the user has no such key. */
  async revoke(actor: Actor, id: string): Promise<void> {
    await (this.#o.trail ?? noAudit).track(actor, 's3key.revoke', null, async () => {
      if (!(await this.#o.catalog.deleteS3Key(actor.user, id))) throw new LadingError('NOT_FOUND', `You have no S3 key '${id}'.`);
    }, undefined, { key: id });
  }

  /**
   * The actor the key `id` stands for and its secret, read from the catalog now. Rejects with
   * `INVALID_CREDENTIAL` when the key does not exist (or was revoked) and when its user is
   * gone or disabled.
   */
  async resolve(id: string, via?: AuditVia): Promise<{ actor: Actor; secret: Buffer }> {
    const record = KEY_ID.test(id) ? await this.#o.catalog.getS3Key(id) : null;
    if (!record) throw new LadingError('INVALID_CREDENTIAL', 'The access key does not exist or was revoked.');
    const actor = await this.#o.backend.actorFor(record.user, via);
    return { actor, secret: this.#o.sealer.open(record.secret, PURPOSE) };
  }
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding. */
function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}
