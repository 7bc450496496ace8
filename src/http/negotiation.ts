/**
 * Content negotiation by the `Accept` header (RFC 9110 §12.5.1), for the few answers lading
 * gives in more than one media type. It reads a header and chooses; it sends nothing.
 */

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',')) {
    const [mediaRange = '', ...params] = part.split(';').map((s) => s.trim());
    const [type, subtype] = mediaRange.toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((s) => s.trim());
      if (name?.toLowerCase() === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The quality the ranges give `mediaType`: that of the most specific range matching it, 0 when none does. */
function qualityOf(ranges: Range[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  let best: { specificity: number; q: number } | null = null;
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
    if (specificity < 0) continue;
    if (!best || specificity > best.specificity || (specificity === best.specificity && r.q > best.q)) best = { specificity, q: r.q };
  }
  return best?.q ?? 0;
}

/**
 * The media type of `offered` (lower case `type/subtype`) that `accept` prefers: the one of
 * highest quality, the earliest offered on a tie. Without an `Accept` header, or when it
 * accepts none of them, the first offered: a client that did not ask gets the default.
 */
export function preferredType<T extends string>(accept: string | undefined, offered: readonly [T, ...T[]]): T {
  if (accept === undefined || accept.trim() === '') return offered[0];
  const ranges = parseAccept(accept);
  let choice = offered[0];
  let best = 0;
  for (const type of offered) {
    const q = qualityOf(ranges, type);
    if (q > best) {
      best = q;
      choice = type;
    }
  }
  return choice;
}

/**
 * Whether a request is a browser opening a page: a GET whose Accept prefers text/html to
 * application/json and whose query asks for no download (`download=…`).
 */
export function wantsPage(method: string, url: string, accept: string | undefined): boolean {
  return method === 'GET'
    && !new URLSearchParams(url.split('?')[1] ?? '').has('download')
    && preferredType(accept, ['application/json', 'text/html']) === 'text/html';
}
