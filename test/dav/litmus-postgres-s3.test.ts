/**
 * The litmus WebDAV suite (see `litmus-suite.ts`) on a PostgreSQL catalog and
 * an S3 object store. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips
 * without them, except under CI, where that fails.
 */
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { litmusSuite } from './litmus-suite.ts';

const services = postgresS3('litmus on PostgreSQL and S3', 'litmus on PostgreSQL and S3 need', 'litmus');
if (services) litmusSuite('PostgreSQL and S3', services.flags, services.dropSchema);
