/**
 * What the credential admin commands print: `lading proxy show <user>` (the proxy the backend
 * sees for the user's most recent session) and `lading ca export <dir>` (the CA in
 * grid-security layout). Formats facts for operators; prints no key material.
 */
import { LadingError } from '../core/errors.ts';
import { exportGridSecurity } from '../identity/x509/ca.ts';
import type { Deps } from '../wiring/deps.ts';

/** `hh:mm:ss` as grid-proxy-info prints time left; 0:00:00 once expired. */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/** Rejects with `NOT_FOUND` when the user has no live session with a credential. */
export async function proxyShow(deps: Pick<Deps, 'catalog' | 'credentials'>, user: string, now: Date): Promise<string> {
  const session = await deps.catalog.latestSessionOf(user, now);
  if (!session?.credential) throw new LadingError('NOT_FOUND', `'${user}' has no live session, hence no proxy.`);
  const status = await deps.credentials.inspect(session.credential);
  const left = status.notAfter.getTime() - now.getTime();
  return [
    `subject  : ${status.subject}`,
    `issuer   : ${status.issuer ?? '(none)'}`,
    `notAfter : ${status.notAfter.toISOString()}`,
    `timeleft : ${formatTimeLeft(left)}${left <= 0 ? ` (expired ${Math.floor(-left / 60_000)} minutes ago)` : ''}`,
    '',
  ].join('\n');
}

/** Rejects with `NOT_FOUND` when lading runs no CA of its own (`ca.issuer` is a URL). */
export async function caExport(deps: Pick<Deps, 'x509'>, dir: string): Promise<string> {
  const ca = deps.x509.ca;
  if (!ca) throw new LadingError('NOT_FOUND', 'lading runs no CA of its own (ca.issuer is a URL); export that CA from its operator.');
  const files = await exportGridSecurity(ca, dir);
  return files.map((f) => `wrote ${f}\n`).join('');
}
