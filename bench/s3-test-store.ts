/**
 * A client of the test S3 store that `.ci/services/swift.sh` describes (env LADING_TEST_S3_*),
 * for the benchmarks that talk to it directly (not a test). Path-style, checksums only when an
 * operation requires them, as lading's own S3 driver.
 */
import { S3Client } from '@aws-sdk/client-s3';

export function testStore(): { client: S3Client; Bucket: string } {
  const e = process.env;
  const client = new S3Client({
    endpoint: e.LADING_TEST_S3_ENDPOINT!, region: e.LADING_TEST_S3_REGION!, forcePathStyle: true,
    credentials: { accessKeyId: e.LADING_TEST_S3_ACCESS_KEY!, secretAccessKey: e.LADING_TEST_S3_SECRET_KEY! },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return { client, Bucket: e.LADING_TEST_S3_BUCKET! };
}
