/**
 * What esbuild leaves out of a function bundle for the Lambda runtime to provide. The default is
 * the whole AWS SDK (NodejsFunction's own default for Node.js 18+). The /v1 function keeps only the
 * SDK's clients and lib packages external: the rest it uses (the presigner) is bundled, since the
 * runtime is not documented to ship it. Plain data, shared with the bundle benchmark.
 */
export const SDK_EXTERNALS: readonly string[] = ['@aws-sdk/*'];
export const MEMORY_API_EXTERNALS: readonly string[] = ['@aws-sdk/client-*', '@aws-sdk/lib-*'];
