/**
 * Independent readers of the archives a collection downloads as (`download=zip`, `download=bag`),
 * for the archive tests on every deployment: Python's `zipfile` (every member's SHA-256), `7z t`,
 * a BagIt (RFC 8493) check from Python's standard library, and what the catalog says each
 * member should be.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { parsePath } from '../../src/core/path.ts';
import type { Entity } from '../../src/core/types.ts';
import type { TestServer } from '../helpers/server.ts';

export const run = promisify(execFile);
export const hex = (checksum: string) => Buffer.from(checksum.slice('sha2:'.length), 'base64').toString('hex');

/**
 * Reads a ZIP file with Python's zipfile: every member's SHA-256 (streamed), and directory
 * names; fails (exit 1, message on stderr) where zipfile refuses the archive.
 */
export const PY_READ = `
import hashlib, json, sys, zipfile
out = {}
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        if info.is_dir():
            out[info.filename] = None
            continue
        h = hashlib.sha256()
        with z.open(info) as f:
            while True:
                b = f.read(1 << 20)
                if not b: break
                h.update(b)
        out[info.filename] = h.hexdigest()
        assert info.flag_bits & 0x800 or info.filename.isascii(), 'UTF-8 flag missing: ' + info.filename
json.dump(out, open(sys.argv[2], 'w'))
`;

/**
 * A BagIt (RFC 8493) check from the standard library: bagit.txt, every payload file in the
 * manifest with its SHA-256 recomputed and no manifest line without its file, the tag manifest
 * recomputed, and bag-info.txt's Payload-Oxum. Prints the bag-info fields as JSON.
 */
export const PY_BAG = `
import hashlib, json, os, sys, zipfile
def unesc(p): return p.replace('%0D', '\\r').replace('%0A', '\\n').replace('%25', '%')
z = zipfile.ZipFile(sys.argv[1])
names = [i.filename for i in z.infolist()]
top = names[0].split('/')[0] + '/'
assert all(n.startswith(top) for n in names), 'one top folder'
def text(n): return z.read(top + n).decode('utf-8')
assert text('bagit.txt') == 'BagIt-Version: 1.0\\nTag-File-Character-Encoding: UTF-8\\n', 'bagit.txt'
sha = lambda b: hashlib.sha256(b).hexdigest()
manifest = {}
for line in text('manifest-sha256.txt').splitlines():
    digest, path = line.split(None, 1)
    manifest[unesc(path)] = digest
payload = [n[len(top):] for n in names if n.startswith(top + 'data/') and not n.endswith('/')]
assert sorted(payload) == sorted(manifest), 'manifest lists exactly the payload files'
octets = 0
for p in payload:
    b = z.read(top + p)
    octets += len(b)
    assert sha(b) == manifest[p], 'payload digest of ' + p
tags = {}
for line in text('tagmanifest-sha256.txt').splitlines():
    digest, path = line.split(None, 1)
    tags[path] = digest
assert set(tags) >= {'bagit.txt', 'bag-info.txt', 'manifest-sha256.txt'}, 'tag manifest covers the tag files'
for p, d in tags.items():
    assert sha(z.read(top + p)) == d, 'tag digest of ' + p
info = dict(line.split(': ', 1) for line in text('bag-info.txt').splitlines())
assert info['Payload-Oxum'] == '%d.%d' % (octets, len(payload)), 'Payload-Oxum ' + info['Payload-Oxum']
info['pids.txt'] = text('pids.txt')
print(json.dumps(info))
`;

/** Downloads `url` into `file` (the body only with status 200); resolves with the status and headers, rejects when the transfer breaks. */
export function download(url: string, file: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const answer = { status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>) };
      if (answer.status !== 200) {
        res.resume();
        resolve(answer);
        return;
      }
      pipeline(res, createWriteStream(file)).then(() => resolve(answer), reject);
    }).on('error', reject).end();
  });
}

/** The entities below `path` as the catalog stores them, by archive member name. */
export async function expected(s: TestServer, path: string, prefix: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  const root = parsePath(path);
  let afterPath;
  for (;;) {
    const page: Entity[] = await s.deps.catalog.listDescendants(root, 5000, afterPath);
    for (const e of page) out.set(prefix + e.path.slice(root.length + 1) + (e.kind === 'collection' ? '/' : ''), e.kind === 'dataobject' ? hex(e.checksum) : null);
    if (page.length < 5000) break;
    afterPath = page.at(-1)!.path;
  }
  return out;
}

export async function pythonRead(zip: string, dir: string): Promise<Map<string, string | null>> {
  const out = join(dir, 'read.json');
  await run('python3', ['-c', PY_READ, zip, out], { maxBuffer: 1 << 24 });
  return new Map(Object.entries(JSON.parse(await readFile(out, 'utf8')) as Record<string, string | null>));
}

export function sevenZipTest(zip: string): void {
  if (spawnSync('7z', ['-h']).error) {
    if (process.env.CI) assert.fail('7z is missing: install the Debian package p7zip-full');
    console.log('# 7z not installed (Debian p7zip-full): skipping its check');
    return;
  }
  const result = spawnSync('7z', ['t', zip], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(result.status, 0, `7z t: ${result.stdout.slice(-2000)} ${result.stderr}`);
  assert.match(result.stdout, /Everything is Ok/);
}
