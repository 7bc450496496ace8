/**
 * The error the SQL catalog factories throw, when they are called, for an option they cannot
 * work with, so the composition root can name the configuration key behind it. Knows nothing
 * of the configuration.
 */

/** The options a catalog factory may refuse. */
export type CatalogOption = 'file' | 'connectionString' | 'schema' | 'maxConnections';

/**
 * A missing or unusable option of a catalog factory. A `TypeError` whose message names the
 * driver and the option, never the value (a connection string may hold a password).
 */
export class CatalogOptionError extends TypeError {
  override name = 'CatalogOptionError';
  /** The option's name in the factory's options (`file`, `connectionString`, …). */
  readonly option: CatalogOption;
  /** What is wrong with it, e.g. `is required`; never the value itself. */
  readonly problem: string;

  constructor(driver: string, option: CatalogOption, problem: string) {
    super(`${driver} catalog: option \`${option}\` ${problem}`);
    this.option = option;
    this.problem = problem;
  }
}
