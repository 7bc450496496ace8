/**
 * Drives the browser side of the login over plain HTTP for tests: a small cookie jar, manual
 * redirects, and form posts on the embedded provider's pages. The browser test uses Chromium;
 * this is for the security cases that need to tamper with individual steps.
 */
import assert from 'node:assert/strict';

export class Jar {
  readonly #cookies = new Map<string, { value: string; path: string }>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const path = attrs.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const maxAge = attrs.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('max-age='));
      const expires = attrs.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith('expires='));
      const gone = value === '' || maxAge === 'Max-Age=0' || (expires !== undefined && new Date(expires.slice(8)).getTime() < Date.now());
      if (gone) this.#cookies.delete(`${name};${path}`);
      else this.#cookies.set(`${name};${path}`, { value, path });
    }
  }

  header(url: string): string {
    const path = new URL(url).pathname;
    return [...this.#cookies.entries()]
      .filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : c.path + '/'))
      .map(([k, c]) => `${k.split(';')[0]}=${c.value}`).join('; ');
  }

  get(name: string): string | undefined {
    return [...this.#cookies.entries()].find(([k]) => k.split(';')[0] === name)?.[1].value;
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.store(res);
    return res;
  }
}

export function location(res: Response, base: string): string {
  const loc = res.headers.get('location');
  assert.ok(loc, `expected a redirect, got ${res.status}`);
  return new URL(loc, base).href;
}

/** Follows redirects until a response that is not one, or until `stop(url)` says so. */
export async function follow(jar: Jar, url: string, stop: (url: string) => boolean = () => false): Promise<{ url: string; res: Response | null }> {
  let current = url;
  for (let i = 0; i < 10; i++) {
    if (stop(current)) return { url: current, res: null };
    const res = await jar.fetch(current);
    if (res.status < 300 || res.status >= 400) return { url: current, res };
    current = location(res, current);
  }
  throw new Error('too many redirects');
}

export function hiddenCsrf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  assert.ok(m, 'the page carries a CSRF token');
  return m[1]!;
}

export function formPost(jar: Jar, url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return jar.fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/**
 * From /auth/askauth (or `start`) through login (and a consent page, if any) to the callback URL
 * the provider sends the browser to (not followed). Returns the jar and that URL. lading's own
 * app is asked no consent; with `consent` 'abort', the authorization request asks for the
 * consent page (`prompt=consent`, as any client may) and the user cancels there.
 */
export async function loginToCallback(
  base: string, user: string, password: string, jar = new Jar(), start = `${base}/auth/askauth`, consent: 'confirm' | 'abort' = 'confirm',
): Promise<{ jar: Jar; callback: string }> {
  const isCallback = (u: string) => new URL(u).pathname === '/auth/callback';
  const isAuthorization = (u: string) => new URL(u).pathname === '/oidc/auth';
  let step = await follow(jar, start, (u) => isCallback(u) || (consent === 'abort' && isAuthorization(u)));
  if (!step.res && isAuthorization(step.url)) {
    const asked = new URL(step.url);
    asked.searchParams.set('prompt', 'consent');
    step = await follow(jar, asked.href, isCallback);
  }
  for (let i = 0; i < 3 && step.res; i++) {
    const html = await step.res.text();
    assert.equal(step.res.status, 200, html);
    const csrf = hiddenCsrf(html);
    const post = html.includes('id="password"')
      ? await formPost(jar, `${step.url}/login`, { csrf, username: user, password })
      : await formPost(jar, `${step.url}/${consent}`, { csrf });
    assert.equal(post.status, 303, await post.clone().text());
    step = await follow(jar, location(post, step.url), isCallback);
  }
  assert.ok(!step.res, 'ended at the callback');
  return { jar, callback: step.url };
}
