/**
 * The error a driver factory throws, when it is called, for an option it cannot work with:
 * it names the driver and the option, never the value (a connection string or a password may
 * be in it), so the composition root can name the configuration key behind it.
 */
export class DriverOptionError<Option extends string> extends TypeError {
  /** The option's name in the factory's options (`file`, `prefix`, …). */
  readonly option: Option;
  /** What is wrong with it, e.g. `is required`; never the value itself. */
  readonly problem: string;

  constructor(driver: string, option: Option, problem: string) {
    super(`${driver}: option \`${option}\` ${problem}`);
    this.option = option;
    this.problem = problem;
  }
}
