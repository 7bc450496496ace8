/**
 * lading's own CA as the catalog keeps it, for every node sharing the catalog: the CA that
 * signs (the highest generation), and the CAs to trust (that one, and those it replaced less
 * than an overlap ago, so that certificates they signed keep verifying until they expire).
 * A node joins with the catalog's address and the master key alone: the first node creates the
 * CA (or imports the `ca.json` of a data directory from before), every other finds it.
 * `rotateCa` adds the next generation. Private keys are stored sealed under the master key,
 * opened only in memory, never logged or returned. It does not decide who may obtain a
 * certificate, and reads no file but the legacy `ca.json` it is pointed at.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { CaStore, Clock, StoredCa } from '../../core/ports.ts';
import type { Sealer } from '../secrets/sealing.ts';
import { type CertificateAuthority, CA_KEY_PURPOSE, createCa } from './ca.ts';
import { certificatePem, importPrivateKeyPem, parseCertificate, type x509 } from './x509.ts';

export interface CaRing {
  /** The CA that signs now: the highest generation this node has read. */
  active(): CertificateAuthority;
  /** Its generation. */
  generation(): number;
  /**
   * The PEM certificates to trust now, the signing CA first: it, and each CA whose successor
   * was created less than the overlap ago.
   */
  anchorPems(): string[];
  /**
   * Reads the catalog again, taking up a CA another node (or `lading ca rotate`) added.
   * Resolves true when what `active` or `anchorPems` give changed. Calls within `minGapMs`
   * of the last read share it, unless `force` is set.
   */
  refresh(options?: { force?: boolean }): Promise<boolean>;
}

export interface CaRingOptions {
  catalog: CaStore;
  sealer: Sealer;
  zone: string;
  clock: Clock;
  /** How long a replaced CA stays trusted, in seconds: the longest lifetime of what it signed. */
  overlapSeconds: number;
  /** The `ca.json` of a data directory from before CAs were kept in the catalog, imported when the catalog has none. */
  legacyFile?: string | null;
  /** Told once, when this node imported or created the catalog's first CA. */
  log?: (message: string) => void;
  /** Reads closer together than this share one (default 1000 ms). */
  minGapMs?: number;
}

/** The CA with its key opened, from a stored one. Throws `INTERNAL` when the key does not open (another master key). */
async function opened(stored: StoredCa, sealer: Sealer): Promise<CertificateAuthority> {
  const certPem = new X509Certificate(stored.certPem).toString();
  const key = await importPrivateKeyPem(sealer.open(stored.sealedKey, CA_KEY_PURPOSE).toString('utf8'));
  let cert: x509.X509Certificate | undefined;
  return {
    certPem, key,
    get cert() {
      return (cert ??= parseCertificate(certPem));
    },
  };
}

/** A new CA sealed for the catalog, as generation `generation`. */
async function sealedCa(o: Pick<CaRingOptions, 'sealer' | 'zone'>, generation: number, now: Date): Promise<StoredCa> {
  const created = await createCa(o.zone, now);
  return { generation, certPem: certificatePem(created.cert), sealedKey: o.sealer.seal(created.keyPem, CA_KEY_PURPOSE), createdAt: now };
}

/**
 * The first CA when the catalog holds none: the legacy file's, or a new one. Race-safe: it is
 * added as generation 1 only if no node added one meanwhile, and the catalog's is used either way.
 */
async function firstCa(o: CaRingOptions): Promise<void> {
  const now = o.clock.now();
  let candidate: StoredCa;
  let source: string;
  const legacy = o.legacyFile ? await readFile(o.legacyFile, 'utf8').catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }) : null;
  if (legacy !== null) {
    const state = JSON.parse(legacy) as { cert: string; key: string };
    candidate = { generation: 1, certPem: state.cert, sealedKey: state.key, createdAt: now };
    source = `imported the CA of ${o.legacyFile} into the catalog; the catalog holds it from now on, for every node`;
  } else {
    candidate = await sealedCa(o, 1, now);
    source = 'created the CA and stored it in the catalog (its key sealed under the master key)';
  }
  // NOTE: the key must open before it is shared: a node with another master key would
  // otherwise store a CA no node with the right one can use.
  await opened(candidate, o.sealer);
  if (await o.catalog.addCa(candidate)) o.log?.(source);
}

/**
 * Opens the catalog's CAs, creating or importing the first one when there is none. Rejects
 * with `INTERNAL` when the signing CA's key does not open under this node's master key.
 */
export async function openCaRing(o: CaRingOptions): Promise<CaRing> {
  let stored = await o.catalog.listCas();
  if (stored.length === 0) {
    await firstCa(o);
    stored = await o.catalog.listCas();
  }
  const overlapMs = o.overlapSeconds * 1000;
  const minGapMs = o.minGapMs ?? 1000;
  let active = await opened(stored[0]!, o.sealer);
  let current = stored;
  let lastRead = Date.now();
  let reading: Promise<boolean> | null = null;

  const anchors = (): string[] => {
    const now = o.clock.now().getTime();
    // NOTE: a CA is trusted while what it signed may be valid: until its successor has been
    // signing for longer than the overlap.
    return current.filter((ca, i) => i === 0 || current[i - 1]!.createdAt.getTime() > now - overlapMs).map((ca) => ca.certPem);
  };
  let seenAnchors = anchors().join('');

  const read = async (): Promise<boolean> => {
    const fresh = await o.catalog.listCas();
    lastRead = Date.now();
    if (fresh.length === 0) return false;
    const changed = fresh[0]!.generation !== current[0]!.generation;
    if (changed) active = await opened(fresh[0]!, o.sealer);
    current = fresh;
    const text = anchors().join('');
    const anchorsChanged = text !== seenAnchors;
    seenAnchors = text;
    return changed || anchorsChanged;
  };

  return {
    active: () => active,
    generation: () => current[0]!.generation,
    anchorPems: anchors,
    refresh(options = {}) {
      if (reading) return reading;
      if (!options.force && Date.now() - lastRead < minGapMs) {
        const text = anchors().join('');
        const changed = text !== seenAnchors;
        seenAnchors = text;
        return Promise.resolve(changed);
      }
      reading = read().finally(() => {
        reading = null;
      });
      return reading;
    },
  };
}

/**
 * Makes a new CA the signing one for every node sharing `catalog`: it is stored as the next
 * generation, its key sealed under the master key. Resolves with its generation and
 * certificate. A rotation by another process at the same moment makes this one try the
 * generation after.
 */
export async function rotateCa(o: Pick<CaRingOptions, 'catalog' | 'sealer' | 'zone' | 'clock'>): Promise<{ generation: number; certPem: string }> {
  for (;;) {
    const [latest] = await o.catalog.listCas();
    const next = await sealedCa(o, (latest?.generation ?? 0) + 1, o.clock.now());
    if (await o.catalog.addCa(next)) return { generation: next.generation, certPem: next.certPem };
  }
}
