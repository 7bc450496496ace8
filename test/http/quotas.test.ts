/**
 * Quotas over every write path (see `quotas-suite.ts`) on the embedded defaults: the SQLite
 * catalog and files on local disk.
 */
import { quotasSuite } from './quotas-suite.ts';

quotasSuite('SQLite');
