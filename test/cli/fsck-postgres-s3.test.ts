/**
 * Fixity on PostgreSQL and S3 (see `fsck-suite.ts`): the bytes are damaged in the object store
 * itself, through its own S3 API. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`;
 * skips without them, except under CI, where that fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { fsckSuite } from './fsck-suite.ts';

const services = postgresS3('fixity on PostgreSQL and S3', 'fixity on PostgreSQL and S3 needs', 'fixity');
if (services) {
  const { s3, flags } = services;
  const prefix = flags['resource.s3.prefix']!;
  const client = new S3Client({
    endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.key, secretAccessKey: s3.secret }, forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = s3.bucket;
  fsckSuite('PostgreSQL and S3', flags, {
    async flipByte(_s, key) {
      const got = await client.send(new GetObjectCommand({ Bucket, Key: prefix + key }));
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      bytes[1000] = bytes[1000]! ^ 0x01;
      await client.send(new PutObjectCommand({ Bucket, Key: prefix + key, Body: bytes, ContentLength: bytes.length }));
    },
    async remove(_s, key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: prefix + key }));
    },
    async addOrphan(_s, key, bytes) {
      await client.send(new PutObjectCommand({ Bucket, Key: prefix + key, Body: bytes, ContentLength: bytes.length }));
      // NOTE: the store gives an object's time in whole seconds, rounded up (Swift's S3 API):
      // only once that time has passed is the key older than recovery.grace, even at 0.
      await sleep(1100);
    },
    holds: (_s, key) => client.send(new HeadObjectCommand({ Bucket, Key: prefix + key })).then(() => true, () => false),
  }, {
    // NOTE: an S3 object's time cannot be set back: fsck counts bytes of any age as orphans here.
    fsckEnv: { LADING_RECOVERY_GRACE: '0' },
    async cleanup() {
      await services.dropSchema();
      client.destroy();
    },
  });
}
