/**
 * What the core and the identity services report as it happens, for whoever watches (the
 * metrics): plain callbacks, each optional, called synchronously where the event happens. The
 * core never learns who listens; without an observer nothing is called and nothing is counted.
 * An observer must not throw and must return at once (it runs on the request's path).
 */

/** The limits a refusal (`TOO_MANY_REQUESTS`) can come from, as a metric's label. */
export type Limit =
  | 'login'
  | 'share_requests_per_address'
  | 'share_requests_per_link'
  | 'share_passwords'
  | 'share_links_per_user'
  | 'uploads_open';

export interface Observer {
  /** A password login failed (wrong user name or password), through `via`. */
  loginFailed?(via: 'api' | 'browser'): void;
  /** A request was refused by `limit`. */
  limited?(limit: Limit): void;
  /** A share link was used: a read link's download (or archive), or a drop box's deposit. */
  shareUsed?(kind: 'read' | 'upload'): void;
  /** A job of `kind` failed; `final` when it will not be tried again. */
  jobFailed?(kind: string, final: boolean): void;
  /** A fixity check (`core/fixity.ts`) read `bytes` bytes of a stored object and found them `outcome`. */
  objectVerified?(bytes: number, outcome: 'ok' | 'damaged' | 'missing'): void;
  /**
   * A fixity check marked the data object at `path` (its stored path: a trashed one's is
   * hidden) damaged, for `reason`: its bytes are missing or not the ones recorded, and it is no
   * longer served. Told at each finding, also of an object marked before.
   */
  objectDamaged?(path: string, reason: string): void;
}
