/**
 * lading's version, from package.json. Its own module so that the command can say it without
 * loading the server.
 */
import { createRequire } from 'node:module';

export const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
