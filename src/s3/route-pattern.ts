/**
 * The pattern of an S3 request's URL for the metrics' `route` label: the service (`/`), a bucket
 * (`/{bucket}`) or an object (`/{bucket}/{key}`) — never a bucket's or key's name, so the label
 * takes three values whatever the traffic.
 */
export function s3RoutePattern(url: string): string {
  const path = url.split('?', 1)[0]!;
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.length === 0) return '/';
  return segments.length === 1 ? '/{bucket}' : '/{bucket}/{key}';
}
