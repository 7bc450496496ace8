/**
 * The error the SQL catalog factories throw, when they are called, for an option they cannot
 * work with, so the composition root can name the configuration key behind it. Knows nothing
 * of the configuration.
 */
import { DriverOptionError } from '../option-error.ts';

/** The options a catalog factory may refuse. */
export type CatalogOption = 'file' | 'connectionString' | 'schema' | 'maxConnections';

/** A missing or unusable option of a catalog factory (a `TypeError`). */
export class CatalogOptionError extends DriverOptionError<CatalogOption> {
  override name = 'CatalogOptionError';

  constructor(driver: string, option: CatalogOption, problem: string) {
    super(`${driver} catalog`, option, problem);
  }
}
