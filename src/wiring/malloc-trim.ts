/**
 * The one entry to `koffi` (a foreign-function interface with prebuilt binaries, no compiler
 * needed): binds the GNU C library's `malloc_trim`, which gives the pages of memory freed in the
 * middle of the C heap back to the system. glibc returns only the top of its heap by itself, and
 * V8's optimising compilers take and free some 25 MiB of it in the first seconds under load; a
 * long-lived allocation above that space then keeps all of it resident (bench/README.md).
 */
import { createRequire } from 'node:module';

/** Gives free C-heap pages back to the system; true when some were. Costs ~1 ms. */
export type MallocTrim = () => boolean;

interface Koffi {
  load(path: string): { func(signature: string): (pad: number) => number };
}

/**
 * `malloc_trim(0)` of the running C library, bound on the first call (so `koffi` is loaded at
 * the first trim, not at start); where there is none to call, every call answers false:
 * not Linux, another C library than glibc (musl has no `libc.so.6`), or no prebuilt `koffi`
 * binary for this platform. `binding` is for tests.
 */
export function mallocTrim(binding: () => ((pad: number) => number) | null = bind): MallocTrim {
  let trim: ((pad: number) => number) | null | undefined;
  return () => {
    // NOTE: not `??=`, which would try to bind again after a failure (null), on every call.
    if (trim === undefined) trim = binding();
    return trim !== null && trim(0) === 1;
  };
}

function bind(): ((pad: number) => number) | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    return koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
  } catch {
    return null;
  }
}
