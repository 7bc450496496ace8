/**
 * The embedded handle service: PIDs `<prefix>/<suffix>` whose records live in lading's own
 * catalog. For deployments without a prefix of their own at a Handle server; the records are
 * resolvable through `/api/pids/…` and the Handle REST read shape at `/api/handles/…`.
 */
import type { Clock, HandleStore, PidProvider } from '../../core/ports.ts';
import { checkPrefix } from './options.ts';

export interface EmbeddedPidOptions {
  catalog: HandleStore;
  clock: Clock;
  /** Handle prefix of new PIDs, e.g. `21.T99999`; must not contain '/'. */
  prefix: string;
}

/** Throws `PidOptionError` naming `prefix` when it is empty or contains '/'. */
export function createEmbeddedPidProvider(options: EmbeddedPidOptions): PidProvider {
  checkPrefix('embedded PID provider', options.prefix);
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
