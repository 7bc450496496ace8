/**
 * Attribute–value–unit metadata (AVUs) as users read and change them: read access lists an
 * entity's AVUs, write access adds and removes them. The attributes the backend's rules write
 * (`PID`, `EUDAT/…`, and every name that reads as one of them) are read-only to everyone here,
 * so a PID can be neither forged nor lost through the API. Sizes follow iRODS (2,700 bytes an attribute, value or unit); an entity
 * holds at most `MAX_AVUS` AVUs. Takes ports; knows nothing of HTTP.
 */
import type { Actor, Backend } from './backend.ts';
import { type Auditor, noAudit } from './audit.ts';
import { LadingError } from './errors.ts';
import type { Path } from './path.ts';
import type { NamespaceStore } from './ports.ts';
import type { Avu } from './types.ts';

/** Longest attribute, value or unit, in UTF-8 bytes (iRODS's limit). */
export const MAX_AVU_BYTES = 2700;
/** Most AVUs one entity may carry. */
export const MAX_AVUS = 1000;

// NOTE: characters that render as nothing (zero-width spaces and joiners, soft hyphens,
// variation selectors, the BOM, …).
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * `attribute` as it reads: in Unicode compatibility form (NFKC: fullwidth `ＰＩＤ` is `PID`,
 * `／` is `/`), without default-ignorable code points, without surrounding white space.
 */
export function attributeAsRead(attribute: string): string {
  return attribute.normalize('NFKC').replace(INVISIBLE, '').trim();
}

/**
 * Whether the backend's rules own `attribute`: `PID` and anything under `EUDAT/`, in any case
 * (a `pid` next to `PID` would read as the same thing), decided on the name as it reads
 * (`attributeAsRead`), so that no lookalike (`PID\u200b`, ` PID`, `ＰＩＤ`, `EUDAT／x`) passes
 * for one the rules wrote.
 */
export function isReservedAttribute(attribute: string): boolean {
  const upper = attributeAsRead(attribute).toUpperCase();
  return upper === 'PID' || upper.startsWith('EUDAT/');
}

// NOTE: an attribute is a name: no control characters at all. A value or unit may hold line
// breaks and tabs, but not NUL, which PostgreSQL cannot store in text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

function checkText(what: 'attribute' | 'value' | 'unit', text: string, required: boolean): void {
  if (required && text.length === 0) throw new LadingError('BAD_REQUEST', `The ${what} must not be empty.`);
  if (!text.isWellFormed()) throw new LadingError('BAD_REQUEST', `The ${what} must be valid Unicode.`);
  if (what === 'attribute' ? CONTROL.test(text) : text.includes('\u0000')) {
    throw new LadingError('BAD_REQUEST', what === 'attribute' ? 'The attribute must not contain control characters.' : `The ${what} must not contain U+0000.`);
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_AVU_BYTES) throw new LadingError('BAD_REQUEST', `The ${what} must be at most ${MAX_AVU_BYTES} bytes long (UTF-8).`);
}

export interface MetadataOptions {
  backend: Pick<Backend, 'require'>;
  catalog: Pick<NamespaceStore, 'getEntity' | 'listMeta' | 'addMeta' | 'removeMeta'>;
  /** The audit trail every change is recorded in; none when absent. */
  trail?: Auditor;
}

export class Metadata {
  readonly #o: MetadataOptions;

  constructor(options: MetadataOptions) {
    this.#o = options;
  }

  /**
   * The AVUs of the entity at `path`, sorted by attribute, value and unit. Rejects with
   * `FORBIDDEN` unless `actor` may read it (whether or not it exists), `NOT_FOUND`.
   */
  async list(actor: Actor, path: Path): Promise<Avu[]> {
    await this.#entity(actor, path, 'read');
    return this.#o.catalog.listMeta(path);
  }

  /**
   * Adds an AVU (nothing changes when the same triple is there) and answers the entity's AVUs.
   * Rejects with `FORBIDDEN` unless `actor` may write the entity, and for a reserved attribute
   * (`isReservedAttribute`); `NOT_FOUND`; `BAD_REQUEST` for an empty attribute or value, a
   * control character in the attribute, U+0000 or invalid Unicode anywhere, a part over
   * `MAX_AVU_BYTES`, or an entity that holds `MAX_AVUS` already.
   */
  async add(actor: Actor, path: Path, avu: Avu): Promise<Avu[]> {
    return (this.#o.trail ?? noAudit).track(actor, 'meta.add', path, () => this.#add(actor, path, avu), undefined, { attribute: avu.attribute, value: avu.value, unit: avu.unit ?? null });
  }

  async #add(actor: Actor, path: Path, avu: Avu): Promise<Avu[]> {
    await this.#entity(actor, path, 'write');
    this.#mayChange(avu.attribute);
    checkText('attribute', avu.attribute, true);
    checkText('value', avu.value, true);
    checkText('unit', avu.unit, false);
    const existing = await this.#o.catalog.listMeta(path);
    const present = existing.some((m) => m.attribute === avu.attribute && m.value === avu.value && m.unit === avu.unit);
    // NOTE: counted before adding, so two concurrent additions may pass the limit by one each;
    // the limit bounds an entity's size, it is not an exact quota.
    if (!present && existing.length >= MAX_AVUS) throw new LadingError('BAD_REQUEST', `'${path}' already carries ${MAX_AVUS} AVUs, the most an entity may carry; remove some first.`);
    if (!present) await this.#o.catalog.addMeta(path, avu);
    return this.#o.catalog.listMeta(path);
  }

  /**
   * Removes the AVUs with `attribute` (and `value`, when given, whatever their unit) and
   * answers the entity's AVUs. Rejects with `FORBIDDEN` unless `actor` may write the entity, and
   * for a reserved attribute; `NOT_FOUND` when the entity does not exist or no AVU matches.
   */
  async remove(actor: Actor, path: Path, attribute: string, value?: string): Promise<Avu[]> {
    return (this.#o.trail ?? noAudit).track(actor, 'meta.remove', path, () => this.#remove(actor, path, attribute, value), undefined, { attribute, value: value ?? null });
  }

  async #remove(actor: Actor, path: Path, attribute: string, value?: string): Promise<Avu[]> {
    await this.#entity(actor, path, 'write');
    this.#mayChange(attribute);
    const existing = await this.#o.catalog.listMeta(path);
    if (!existing.some((m) => m.attribute === attribute && (value === undefined || m.value === value))) {
      throw new LadingError('NOT_FOUND', `'${path}' has no AVU with attribute '${attribute}'${value === undefined ? '' : ` and value '${value}'`}.`);
    }
    await this.#o.catalog.removeMeta(path, attribute, value);
    return this.#o.catalog.listMeta(path);
  }

  async #entity(actor: Actor, path: Path, level: 'read' | 'write'): Promise<void> {
    await this.#o.backend.require(actor, path, level);
    if (!(await this.#o.catalog.getEntity(path))) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
  }

  #mayChange(attribute: string): void {
    if (isReservedAttribute(attribute)) {
      throw new LadingError('FORBIDDEN', `The attribute '${attribute}' is written by the backend's PID rules and cannot be set or removed by users.`);
    }
  }
}
