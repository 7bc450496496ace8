/**
 * The exit codes of the client commands, as documented in docs/researchers.md ("Client CLI"): scripts may
 * rely on them. Admin commands keep theirs (1 for a failure, 2 for a configuration mistake).
 */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** Any other failure: the server refused the request or could not be reached. */
  FAILED: 1,
  /** Wrong command-line usage (unknown option, missing argument, a bad value). */
  USAGE: 2,
  /** Not logged in, the token was refused (401) or access was denied (403). */
  AUTH: 3,
  /** The path, share link or other object does not exist (404). */
  NOT_FOUND: 4,
  /** It exists already or changed meanwhile (409, 412). */
  CONFLICT: 5,
  /** The data arrived damaged: a checksum did not match (460, or one the client computed). */
  INTEGRITY: 6,
  /** Stopped by Ctrl-C (SIGINT). */
  INTERRUPTED: 130,
  /** Standard output was closed by its reader (`lading ls | head`): ended quietly, as SIGPIPE would (128 + 13). */
  PIPE: 141,
  /** Stopped by SIGTERM (a batch system's cancel, `kill`): 128 + 15. */
  TERMINATED: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code for an HTTP error status of the API. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 409 || status === 412) return EXIT.CONFLICT;
  if (status === 460) return EXIT.INTEGRITY;
  return EXIT.FAILED;
}
