/**
 * lading's version, from package.json, and the commit it was built from. Its own module so that
 * the command can say them without loading the server.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * What a build baked in: the single-file client defines it (scripts/build-client.mjs), where
 * neither package.json nor a repository is beside the code.
 */
declare const LADING_BUILD: { version: string; commit: string | null; clientOnly?: boolean } | undefined;
const baked = typeof LADING_BUILD === 'undefined' ? undefined : LADING_BUILD;

/** True in the single-file client, which holds the client commands only. */
export const CLIENT_ONLY = baked?.clientOnly === true;

export const VERSION: string = baked?.version ?? (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Reads a file as text, or null when it cannot be read. */
function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * The commit of a git checkout at `root`, read from its files (no `git` process: `--version`
 * stays a few milliseconds), or null when `root` is not one. Follows a worktree's `.git` file
 * and looks for a branch in `packed-refs` when it has no loose ref.
 */
export function checkoutCommit(root: string): string | null {
  let gitDir = join(root, '.git');
  const pointer = readText(gitDir);
  if (pointer !== null) {
    const m = /^gitdir: (.+)$/m.exec(pointer);
    if (!m) return null;
    gitDir = m[1]!.startsWith('/') ? m[1]! : join(root, m[1]!);
  }
  const head = readText(join(gitDir, 'HEAD'))?.trim();
  if (!head) return null;
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
  if (!ref) return null;
  const common = readText(join(gitDir, 'commondir'))?.trim();
  const commonDir = common ? (common.startsWith('/') ? common : join(gitDir, common)) : gitDir;
  for (const dir of [gitDir, commonDir]) {
    const loose = readText(join(dir, ref))?.trim();
    if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
  }
  const packed = readText(join(commonDir, 'packed-refs')) ?? '';
  for (const line of packed.split('\n')) {
    const [sha, name] = line.split(' ');
    if (name === ref && sha && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
  }
  return null;
}

/**
 * The commit lading was built from: baked into the single-file client, written to
 * `build-info.json` when the package was packed (scripts/build-info.mjs), else read from the
 * checkout it runs from; null when none says.
 */
export function buildCommit(): string | null {
  if (baked) return baked.commit;
  const root = join(import.meta.dirname, '..', '..');
  const info = readText(join(root, 'build-info.json'));
  if (info !== null) {
    try {
      const commit = (JSON.parse(info) as { commit?: unknown }).commit;
      if (typeof commit === 'string') return commit;
    } catch { /* an unreadable file says nothing: fall through to the checkout */ }
  }
  return checkoutCommit(root);
}

/** What `lading --version` prints: `0.1.0 (commit 0123456789ab)`, or the version alone. */
export function versionLine(): string {
  const commit = buildCommit();
  return commit ? `${VERSION} (commit ${commit.slice(0, 12)})` : VERSION;
}
