/**
 * The trash over HTTP (see `trash-suite.ts`) on the embedded defaults: the SQLite catalog and
 * files on local disk.
 */
import { trashSuite } from './trash-suite.ts';

trashSuite('SQLite');
