/**
 * The embedded handle service: PIDs `<prefix>/<suffix>` whose records live in lading's own
 * catalog. For deployments without a prefix of their own at a Handle server; the records are
 * resolvable through `/api/pids/…` and the Handle REST read shape at `/api/handles/…`.
 */
import type { Catalog, Clock, PidProvider } from '../../core/ports.ts';

export function createEmbeddedPidProvider(options: { catalog: Catalog; clock: Clock; prefix: string }): PidProvider {
  if (!options.prefix || options.prefix.includes('/')) throw new Error('embedded PID provider: `prefix` is required and must not contain \'/\'');
  return {
    prefix: options.prefix,
    async put(handle, values) {
      await options.catalog.putHandle(handle, values, options.clock.now());
    },
    async resolve(handle) {
      return (await options.catalog.getHandle(handle))?.values ?? null;
    },
  };
}
