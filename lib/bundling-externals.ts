import { join } from 'node:path';

/**
 * What esbuild leaves out of a function bundle for the Lambda runtime to provide. The default is
 * the whole AWS SDK (NodejsFunction's own default for Node.js 18+). The /v1 function keeps only the
 * SDK's clients and lib packages external: the rest it uses (the presigner) is bundled, since the
 * runtime is not documented to ship it. Plain data, shared with the bundle benchmark.
 */
export const SDK_EXTERNALS: readonly string[] = ['@aws-sdk/*'];
export const MEMORY_API_EXTERNALS: readonly string[] = ['@aws-sdk/client-*', '@aws-sdk/lib-*'];

/**
 * Packages bundled from another build than the one esbuild picks for Node, by package name → file.
 * isomorphic-git's `exports` give Node its CommonJS build, one module that esbuild must keep whole
 * (about 160 KB with its inflate, every git command and the HTTP client), though the memory core
 * calls six object functions (`git-overlay.ts`). Its ES module build is the same source and version;
 * from it esbuild keeps what is called: about 120 KB less for each memory function to compile and
 * run at every cold start. Jest maps it to the same build (jest.config.js); the local stack, run
 * by Node from source, loads the CommonJS one.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  'isomorphic-git': join(__dirname, '..', 'node_modules', 'isomorphic-git', 'index.js'),
};
