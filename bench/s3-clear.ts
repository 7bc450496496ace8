/**
 * Deletes every object under a key prefix of the test S3 store (env LADING_TEST_S3_*, from
 * `.ci/services/swift.sh`), so a benchmark leaves nothing in the bucket (not a test).
 *
 *   node bench/s3-clear.ts <prefix>
 */
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

const prefix = process.argv[2];
if (!prefix) {
  console.error('usage: s3-clear.ts <prefix>');
  process.exit(2);
}
const e = process.env;
const client = new S3Client({
  endpoint: e.LADING_TEST_S3_ENDPOINT!, region: e.LADING_TEST_S3_REGION!, forcePathStyle: true,
  credentials: { accessKeyId: e.LADING_TEST_S3_ACCESS_KEY!, secretAccessKey: e.LADING_TEST_S3_SECRET_KEY! },
  requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
});
const Bucket = e.LADING_TEST_S3_BUCKET!;
let token: string | undefined;
do {
  const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }));
  await Promise.all((page.Contents ?? []).map((o) => client.send(new DeleteObjectCommand({ Bucket, Key: o.Key }))));
  token = page.IsTruncated ? page.NextContinuationToken : undefined;
} while (token);
client.destroy();
