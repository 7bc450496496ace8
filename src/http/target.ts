/**
 * The one place an entity path is taken from a request target: the part after a route's
 * prefix (`/api/registered`, `/api/acl`, `/api/metadata`, `/api/publish`, `/api/public`), in
 * origin-form, absolute-form or as a PID record's URL. Decodes through `core/path.ts` only.
 */
import { Type } from './typebox.ts';
import { LadingError } from '../core/errors.ts';
import { type Path, REFUSED_IN_NAMES, parseUrlPath } from '../core/path.ts';

// NOTE: the scheme and authority of an absolute-form request target (`PUT http://host/api/…`),
// which the router strips before matching, as this does.
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The entity path a request target names below `prefix`, and whether it ended in `/` (a
 * listing). The route's wildcard parameter is the same text after the router decoded it, `%2F`
 * into `/`; decoding here, segment by segment, keeps an encoded `/` from becoming a separator.
 * Rejects with `INVALID_PATH`, also when the target does not start with `prefix`.
 */
export function entityTarget(prefix: string, target: string): { path: Path; trailingSlash: boolean } {
  const pathname = target.split('?', 1)[0]!.replace(ABSOLUTE_FORM, '');
  if (!pathname.startsWith(prefix)) throw new LadingError('INVALID_PATH', `The path must start with ${prefix}.`);
  const rest = pathname.slice(prefix.length);
  return { path: parseUrlPath(rest), trailingSlash: rest.length > 1 && rest.endsWith('/') };
}

/** The schema of the wildcard that names an entity's path below `prefix`. */
export function entityParams(prefix: string, what = 'the entity') {
  return Type.Object({
    '*': Type.String({
      description: `Path of ${what} below ${prefix}, e.g. zone/home/alice/data.csv; each segment percent-encoded (an encoded '/' never separates); empty segments are ignored. A trailing '/' lists a collection. Refused with 400: '.' and '..' segments, segments longer than 255 UTF-8 bytes, invalid percent-encoding or UTF-8, and in names given by an upload these characters: ${REFUSED_IN_NAMES}.`,
    }),
  });
}
