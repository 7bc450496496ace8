/**
 * Deletes every object under a key prefix of the test S3 store (env LADING_TEST_S3_*, from
 * `.ci/services/swift.sh`), so a benchmark leaves nothing in the bucket (not a test).
 *
 *   node bench/s3-clear.ts <prefix>
 */
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { testStore } from './s3-test-store.ts';

const prefix = process.argv[2];
if (!prefix) {
  console.error('usage: s3-clear.ts <prefix>');
  process.exit(2);
}
const { client, Bucket } = testStore();
let token: string | undefined;
do {
  const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }));
  await Promise.all((page.Contents ?? []).map((o) => client.send(new DeleteObjectCommand({ Bucket, Key: o.Key }))));
  token = page.IsTruncated ? page.NextContinuationToken : undefined;
} while (token);
client.destroy();
