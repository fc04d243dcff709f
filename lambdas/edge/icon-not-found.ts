/**
 * Lambda@Edge origin-response function of the `/api/icons/*` behaviour (DECISIONS: a missing icon is
 * a 404 in the API's JSON envelope, also through CloudFront).
 *
 * S3 answers a missing key with 403 (CloudFront's origin access control grants no s3:ListBucket) or
 * 404, each with an XML body of its own. This turns both into the catalog's 404 envelope; every other
 * response passes through untouched. Lambda@Edge allows no environment variables and no layers, so the
 * function is self-contained, without dependencies.
 */
import type { CloudFrontHeaders, CloudFrontResponseEvent, CloudFrontResultResponse } from 'aws-lambda';

export const ICON_NOT_FOUND_BODY = JSON.stringify({
  success: false,
  error: { code: 'NOT_FOUND', message: 'No icon for this slug' },
});

/** Headers that describe S3's own error body and must not travel with the replacement body. */
const ENTITY_HEADERS = new Set([
  'content-length',
  'content-encoding',
  'content-range',
  'content-md5',
  'content-disposition',
  'content-language',
  'accept-ranges',
  'etag',
  'last-modified',
  'expires',
  'age',
]);

export async function handler(event: CloudFrontResponseEvent): Promise<CloudFrontResultResponse> {
  const { response } = event.Records[0].cf;
  if (response.status !== '403' && response.status !== '404') return response;

  // Keep CloudFront's read-only and reserved headers (Via, Transfer-Encoding, X-Amz-Cf-*): a function
  // that removes or changes them fails validation at the edge. Drop S3's entity and x-amz-* headers.
  const headers: CloudFrontHeaders = {};
  for (const [name, values] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    const fromS3 = lower.startsWith('x-amz-') && !lower.startsWith('x-amz-cf-');
    if (fromS3 || ENTITY_HEADERS.has(lower) || lower === 'content-type' || lower === 'cache-control') continue;
    headers[lower] = values;
  }
  headers['content-type'] = [{ key: 'Content-Type', value: 'application/json' }];
  headers['cache-control'] = [{ key: 'Cache-Control', value: 'no-store' }];

  return {
    status: '404',
    statusDescription: 'Not Found',
    headers,
    bodyEncoding: 'text',
    body: ICON_NOT_FOUND_BODY,
  };
}
