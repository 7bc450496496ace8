/**
 * Moving and copying across collections (see `move-copy-suite.ts`) on a PostgreSQL catalog and
 * an S3 object store. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips
 * without them, except under CI, where that fails.
 */
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { moveCopySuite } from './move-copy-suite.ts';

const services = postgresS3('move and copy on PostgreSQL and S3', 'move and copy on PostgreSQL and S3 need', 'move');
if (services) moveCopySuite('PostgreSQL and S3', services.flags, services.dropSchema);
