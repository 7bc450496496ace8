/**
 * What the credential admin commands print: `lading proxy show <user>` (the proxy the backend
 * sees for the user's most recent session) and `lading ca export <dir>` (the CA in
 * grid-security layout). Formats facts for operators; prints no key material.
 */
import type { AdminService } from '../core/admin.ts';

/** `hh:mm:ss` as grid-proxy-info prints time left; 0:00:00 once expired. */
export function formatTimeLeft(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/** The proxy's subject, issuer and time left at `now`. Rejects with `NOT_FOUND` when the user has no live session with a credential. */
export async function proxyShow(deps: { admin: Pick<AdminService, 'proxyOf'> }, user: string, now: Date = new Date()): Promise<string> {
  const status = await deps.admin.proxyOf(user, now);
  const left = status.notAfter.getTime() - now.getTime();
  return [
    `subject  : ${status.subject}`,
    `issuer   : ${status.issuer ?? '(none)'}`,
    `notAfter : ${status.notAfter.toISOString()}`,
    `timeleft : ${formatTimeLeft(left)}${left <= 0 ? ` (expired ${Math.floor(-left / 60_000)} minutes ago)` : ''}`,
    '',
  ].join('\n');
}

/** One line per file `ca export` wrote. */
export function caExported(files: readonly string[]): string {
  return files.map((f) => `wrote ${f}\n`).join('');
}
