/**
 * Several entities in one download: data objects and collections picked from anywhere the
 * caller may read, written as one ZIP archive whose top folder is the archive's name and holds
 * each picked entity under its own name (a collection with everything below it). Read access
 * to every picked entity is checked, and the selection refused whole, before anything is
 * written; each member's bytes are checked against their stored checksum as they pass (see
 * `core/collection-archive.ts`, whose rules this follows). Knows nothing of HTTP.
 */
import type { Actor, Backend, CollectionWalk } from './backend.ts';
import { LadingError } from './errors.ts';
import { checkedBytes } from './meter.ts';
import { type Path, isWithin, parseName } from './path.ts';
import type { ResourceStream } from './ports.ts';
import type { DataObject, Entity } from './types.ts';
import { ZipWriter } from './zip-writer.ts';

/** The most entities one selection may name (each may be a collection holding many more). */
export const MAX_SELECTION_PATHS = 1000;

/** The archive's name when the caller gives none. */
export const DEFAULT_SELECTION_NAME = 'selection';

/** One picked entity: a data object, or a collection with the walk of everything below it. */
type Picked = { entity: DataObject; walk: null } | { entity: Entity; walk: CollectionWalk };

/** Entities checked for reading, ready to be written as one archive (see `openSelection`). */
export interface Selection {
  /** The archive's top folder and file name (without `.zip`). */
  name: string;
  /** The picked entities, in the order asked for. */
  readonly picked: readonly Picked[];
}

/**
 * Checks that `actor` may read every path of `paths` and that they can share one archive, and
 * returns them as a `Selection` named `name`. Rejects, naming the path, with `FORBIDDEN` (may
 * not read it, whether or not it exists), `NOT_FOUND`, and `BAD_REQUEST` when no path is given,
 * more than `MAX_SELECTION_PATHS`, two with the same name (they would be one member), one below
 * another (its members would be written twice), or a `name` that is not a valid entity name.
 */
export async function openSelection(backend: Backend, actor: Actor, paths: readonly Path[], name: string = DEFAULT_SELECTION_NAME): Promise<Selection> {
  if (paths.length === 0) throw new LadingError('BAD_REQUEST', 'Name at least one path to put in the archive.');
  if (paths.length > MAX_SELECTION_PATHS) {
    throw new LadingError('BAD_REQUEST', `An archive can name at most ${MAX_SELECTION_PATHS} paths, not ${paths.length}; pick their collections instead, or download in parts.`);
  }
  const top = parseName(name);
  const byName = new Map<string, Path>();
  for (const path of paths) {
    const entryName = path.slice(path.lastIndexOf('/') + 1);
    if (entryName === '') throw new LadingError('BAD_REQUEST', 'The root collection cannot be put in an archive; pick what is in it.');
    const other = byName.get(entryName);
    if (other !== undefined) {
      throw new LadingError('BAD_REQUEST', other === path ? `'${path}' is named twice.` : `'${other}' and '${path}' have the same name, '${entryName}', and would be one member of the archive; download them apart.`);
    }
    byName.set(entryName, path);
  }
  const sorted = [...paths].sort();
  for (let i = 1; i < sorted.length; i++) {
    const outer = sorted.slice(0, i).find((p) => isWithin(sorted[i]!, p));
    if (outer !== undefined) throw new LadingError('BAD_REQUEST', `'${sorted[i]}' is inside '${outer}', which is in the archive already.`);
  }
  const picked: Picked[] = [];
  // NOTE: one at a time, in the order given, so the first path refused is the one named.
  for (const path of paths) {
    const entity = await backend.statAs(actor, path);
    picked.push(entity.kind === 'dataobject' ? { entity, walk: null } : { entity, walk: await backend.walkAs(actor, path) });
  }
  return { name: top, picked };
}

/**
 * How many members the archive of `selection` would have (the picked entities and everything
 * below them), counted from the catalog before anything is sent. Rejects with
 * `PAYLOAD_TOO_LARGE` as soon as the count passes `max`.
 */
export async function countSelection(selection: Selection, max: number): Promise<number> {
  let count = 0;
  const over = () => new LadingError('PAYLOAD_TOO_LARGE', `The selection holds more than ${max} files and collections, the most one archive may have (archives.max_entries); download it in parts.`);
  for (const { walk } of selection.picked) {
    if (++count > max) throw over();
    if (walk === null) continue;
    for await (const _ of walk.entries()) {
      if (++count > max) throw over();
    }
  }
  return count;
}

/**
 * The archive of `selection`, as chunks to send in order: the top folder, then each picked
 * entity under its name (a collection as a directory entry followed by its members at their
 * paths below it, so empty ones are kept). Throws — and the bytes yielded so far are not an
 * archive — when a member cannot be read whole or its bytes are not the stored ones
 * (`CHECKSUM_MISMATCH`), or when read access is taken away meanwhile (`FORBIDDEN`).
 */
export async function* selectionArchive(selection: Selection, backend: Backend, actor: Actor, now: Date): AsyncGenerator<Buffer> {
  const zip = new ZipWriter();
  const top = `${selection.name}/`;
  yield* zip.directory(top, now);
  for (const { entity, walk } of selection.picked) {
    const at = `${top}${entity.name}`;
    if (walk === null) {
      const { object, stream } = await backend.openObjectAs(actor, entity.path);
      yield* member(zip, at, object, stream!);
      continue;
    }
    yield* zip.directory(`${at}/`, entity.modifiedAt);
    for await (const below of walk.entries()) {
      const relative = `${at}/${below.path.slice(entity.path.length + 1)}`;
      if (below.kind === 'collection') {
        yield* zip.directory(`${relative}/`, below.modifiedAt);
        continue;
      }
      const { object, stream } = await walk.open(below);
      yield* member(zip, relative, object, stream);
    }
  }
  yield* zip.finish();
}

/** One data object's member: its bytes, checked as they pass; the stream is closed whatever happens. */
async function* member(zip: ZipWriter, name: string, object: DataObject, stream: ResourceStream): AsyncGenerator<Buffer> {
  try {
    yield* zip.file(name, object.modifiedAt, object.size, checkedBytes(object, stream));
  } finally {
    stream.destroy();
  }
}
