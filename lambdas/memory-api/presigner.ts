/**
 * The S3 presigner, on its own: never imported statically. `exports.ts` requires it by a computed
 * specifier on the first large export, and CDK bundles it as `presigner.js` beside the function's
 * `index.js` (lib/lambda-function.ts, `PRESIGNER_CHUNK`), so its signing code (about 160 KB) stays
 * out of the function's bundle and module init.
 */
export { getSignedUrl } from '@aws-sdk/s3-request-presigner';
