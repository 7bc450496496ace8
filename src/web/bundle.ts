/**
 * The web app's assets, built from `src/web/app/` by esbuild the first time a request needs
 * them and then served from memory: one script and one stylesheet, each named by a hash of
 * its content, so browsers may cache them for good and a new version is a new name. Building
 * here instead of at `npm install` keeps a fresh clone's `npm install && npm start` complete
 * with nothing generated on disk or committed, and `lading serve` starts as fast as before
 * (the build runs on the first visit, in about a second). Every node builds the same bytes from
 * the same sources, so the names agree across a cluster behind a load balancer. Knows nothing
 * of HTTP: `http/routes-web.ts` serves what it builds.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';

/** One built file. */
export interface WebAsset {
  /** The URL path it is served at, e.g. `/app/main-3F2A9C1B.js`. */
  path: string;
  contentType: string;
  body: Buffer;
  /** A strong ETag (a hash of the body). */
  etag: string;
}

/** What a build produced: the script and the stylesheet the page loads, and every file by path. */
export interface WebBuild {
  script: WebAsset;
  style: WebAsset;
  byPath: ReadonlyMap<string, WebAsset>;
}

/** Where the app's sources are; the entry point is `main.tsx`. */
export const APP_SOURCE = join(import.meta.dirname, 'app');

/** The URL prefix of the built files. */
export const ASSET_PREFIX = '/app/';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Builds the app (once: later calls share the first build, and a failed build is tried again
 * by the next call). Rejects with esbuild's error when the sources do not compile.
 */
export class WebAssets {
  readonly #source: string;
  #build: Promise<WebBuild> | null = null;

  constructor(source = APP_SOURCE) {
    this.#source = source;
  }

  build(): Promise<WebBuild> {
    this.#build ??= this.#run().catch((err: unknown) => {
      this.#build = null;
      throw err;
    });
    return this.#build;
  }

  async #run(): Promise<WebBuild> {
    // NOTE: imported here, not at the top, so that a process that never serves the app (the
    // admin commands) does not load esbuild.
    const esbuild = await import('esbuild');
    const result = await esbuild.build({
      entryPoints: [join(this.#source, 'main.tsx')],
      bundle: true,
      write: false,
      outdir: '/app',
      entryNames: '[name]-[hash]',
      format: 'esm',
      platform: 'browser',
      target: ['chrome111', 'firefox115', 'safari16.4'],
      jsx: 'automatic',
      jsxImportSource: 'preact',
      minify: true,
      legalComments: 'none',
      logLevel: 'silent',
      absWorkingDir: this.#source,
      define: { 'process.env.NODE_ENV': '"production"' },
    });
    const byPath = new Map<string, WebAsset>();
    for (const file of result.outputFiles) {
      const ext = file.path.slice(file.path.lastIndexOf('.'));
      const type = TYPES[ext];
      if (!type) continue;
      const body = Buffer.from(file.contents);
      const name = file.path.slice(file.path.lastIndexOf('/') + 1);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      byPath.set(`${ASSET_PREFIX}${name}`, { path: `${ASSET_PREFIX}${name}`, contentType: type, body, etag });
    }
    const find = (ext: string) => {
      const asset = [...byPath.values()].find((a) => a.path.endsWith(ext));
      if (!asset) throw new Error(`the app's build made no ${ext} file`);
      return asset;
    };
    return { script: find('.js'), style: find('.css'), byPath };
  }
}
