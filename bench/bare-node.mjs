/**
 * Benchmark peer: the least a Node.js server must do to give lading's promises, so bench/run.sh
 * can show how close lading gets to Node's own ceiling on this machine. A bare `node:http`
 * server, no framework, no catalog, no authentication, over one directory:
 *
 * - `PUT /<name>`: streams the body into a temporary file while hashing it with SHA-256 in the
 *   same pass, flushes the file, renames it into place and flushes the directory (what lading
 *   does for an object's bytes), then answers 201 with the checksum as JSON.
 * - `GET /<name>`: streams the file (`stream.pipeline` of a read stream into the answer).
 * - `GET /<name>?meta`: the file's size and modification time as JSON (a metadata answer).
 *
 * Plain JavaScript, so Node starts it without loading its TypeScript stripper.
 *
 * Usage: node bench/bare-node.mjs <root-dir> <port>   (listens on 127.0.0.1 only)
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const [root, portArg] = process.argv.slice(2);
if (!root || !portArg) {
  console.error('usage: node bench/bare-node.mjs <root-dir> <port>');
  process.exit(2);
}
const tmp = join(root, '.tmp');
await mkdir(tmp, { recursive: true });

/** The file a request's path names inside `root`, or null for anything that would leave it. */
function fileOf(url) {
  const path = decodeURIComponent(new URL(url, 'http://x').pathname);
  const file = normalize(join(root, path));
  return file.startsWith(`${root}/`) && file.length > root.length + 1 && !file.includes('/.tmp') ? file : null;
}

async function flushDir(dir) {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

createServer(async (req, res) => {
  const file = fileOf(req.url ?? '/');
  if (!file) {
    res.writeHead(400).end();
    return;
  }
  try {
    if (req.method === 'PUT') {
      const hash = createHash('sha256');
      const temp = join(tmp, randomBytes(8).toString('hex'));
      const hashing = new Transform({
        transform(chunk, _enc, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(req, hashing, createWriteStream(temp, { flush: true }));
      await mkdir(dirname(file), { recursive: true });
      await rename(temp, file).catch(async (err) => {
        await unlink(temp).catch(() => {});
        throw err;
      });
      await flushDir(dirname(file));
      const body = JSON.stringify({ checksum: `sha2:${hash.digest('base64')}` });
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } else if (req.method === 'GET' && new URL(req.url ?? '/', 'http://x').searchParams.has('meta')) {
      const info = await stat(file);
      const body = JSON.stringify({ name: file.slice(root.length), size: info.size, modified: info.mtime.toISOString() });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } else if (req.method === 'GET') {
      const info = await stat(file);
      if (!info.isFile()) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': info.size });
      await pipeline(createReadStream(file), res);
    } else {
      res.writeHead(405).end();
    }
  } catch (err) {
    const missing = err.code === 'ENOENT';
    if (!res.headersSent) res.writeHead(missing ? 404 : 500).end();
    else res.destroy();
  }
}).listen(Number(portArg), '127.0.0.1');
