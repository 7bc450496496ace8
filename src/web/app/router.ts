/**
 * Routes by the URL's fragment, so the server serves one page: `#/browse/<path>`,
 * `#/item/<path>`, `#/shared`, `#/search?<query>`, `#/recent`, `#/transfers`, `#/trash`, `#/api`. Paths are
 * percent-encoded by segment.
 */
import { useEffect, useState } from 'preact/hooks';
import { encodePath } from './api.ts';

export type Route =
  | { page: 'browse'; path: string | null }
  | { page: 'item'; path: string }
  | { page: 'shared' }
  | { page: 'search'; query: string }
  | { page: 'recent' }
  | { page: 'transfers' }
  | { page: 'trash' }
  | { page: 'api' };

function decode(rest: string): string | null {
  if (rest === '' || rest === '/') return null;
  try {
    return rest.split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, '');
  if (h.startsWith('/browse')) return { page: 'browse', path: decode(h.slice('/browse'.length)) };
  if (h.startsWith('/item/')) {
    const path = decode(h.slice('/item'.length));
    if (path) return { page: 'item', path };
  }
  if (h === '/shared') return { page: 'shared' };
  if (h === '/search' || h.startsWith('/search?')) return { page: 'search', query: h.slice('/search?'.length) };
  if (h === '/recent') return { page: 'recent' };
  if (h === '/transfers') return { page: 'transfers' };
  if (h === '/trash') return { page: 'trash' };
  if (h === '/api') return { page: 'api' };
  return { page: 'browse', path: null };
}

export function browseHref(path: string): string {
  return `#/browse${encodePath(path)}`;
}

export function itemHref(path: string): string {
  return `#/item${encodePath(path)}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
