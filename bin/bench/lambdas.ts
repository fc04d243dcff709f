import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { MEMORY_API_EXTERNALS, SDK_EXTERNALS } from '../../lib/bundling-externals';
import { ms, summarize, verdict, type BenchSection } from './stats';

/**
 * Every Lambda's bundle as CDK's NodejsFunction builds it and its module init in a fresh process
 * (DESIGN.md: under 1 MB minified, init under 150 ms locally). One section for all functions, so a
 * budget missed by one of them is visible beside the others, with the AWS SDK's own load time as
 * the floor the functions that need it cannot go below.
 */

const ROOT = join(__dirname, '..', '..');
const RUNS = 7;

/** Name, entry, and what the function's CDK construct leaves to the runtime. */
const FUNCTIONS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  ['catalog', 'lambdas/catalog/handler.ts', SDK_EXTERNALS],
  ['favorites', 'lambdas/catalog/favorites/handler.ts', SDK_EXTERNALS],
  ['OAuth front', 'lambdas/oauth/handler.ts', SDK_EXTERNALS],
  ['memory REST (/v1)', 'lambdas/memory-api/handler.ts', MEMORY_API_EXTERNALS],
  ['MCP (/mcp)', 'lambdas/mcp/handler.ts', SDK_EXTERNALS],
  ['crawler', 'lambdas/crawler/handler.ts', SDK_EXTERNALS],
  ['icon-not-found (Lambda@Edge)', 'lambdas/edge/icon-not-found.ts', SDK_EXTERNALS],
  ['edge log retention (daily)', 'lambdas/ops/edge-log-retention.ts', SDK_EXTERNALS],
];

/** The X-Ray part of tracing, built beside every traced function's index.js (lib/lambda-function.ts) and required on its first request. */
const XRAY_CHUNK = 'lambdas/shared/observability/xray.ts';

/** The bundle, as NodejsFunction builds it: minified CommonJS, `external` left to the runtime. */
async function bundle(entry: string, outfile: string, external: readonly string[]): Promise<number> {
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    minify: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: [...external],
    logLevel: 'silent',
  });
  return statSync(outfile).size;
}

/** Median milliseconds of `code` in fresh Node processes (what a cold start pays to load it). */
function freshProcessMs(code: string): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = spawnSync(
      process.execPath,
      ['-e', `const t=process.hrtime.bigint();${code};process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, AWS_REGION: 'us-east-1', LOG_LEVEL: 'SILENT' },
      },
    );
    if (out.status !== 0 || out.stdout === '') throw new Error(`loading failed: ${out.stderr}`);
    samples.push(Number(out.stdout));
  }
  return summarize(samples).p50;
}

export async function runLambdasBench(log: (m: string) => void): Promise<BenchSection> {
  // Inside the repository, so `require` finds @aws-sdk in node_modules as Lambda finds the runtime's.
  const dir = join(ROOT, '.bench', 'lambdas');
  mkdirSync(dir, { recursive: true });
  const rows: BenchSection['rows'] = [];
  try {
    for (const [name, entry, external] of FUNCTIONS) {
      log(`bundling ${name}`);
      const out = join(dir, `${name.replace(/\W+/g, '-')}.js`);
      const size = await bundle(entry, out, external);
      const init = freshProcessMs(`require(${JSON.stringify(out)})`);
      rows.push([`${name}: bundle, minified`, `${(size / 1024).toFixed(0)} KB`, '< 1 MB', verdict(size < 1024 * 1024)]);
      rows.push([`${name}: module init`, ms(init), '< 150 ms', verdict(init < 150)]);
    }
    log('bundling the X-Ray chunk');
    const chunk = join(dir, 'xray.js');
    const chunkSize = await bundle(XRAY_CHUNK, chunk, SDK_EXTERNALS);
    const chunkInit = freshProcessMs(`require(${JSON.stringify(chunk)})`);
    rows.push(['X-Ray chunk (xray.js, beside each traced function): size', `${(chunkSize / 1024).toFixed(0)} KB`, 'not in any bundle above', 'informational']);
    rows.push(["X-Ray chunk: load, paid by a traced instance's first request", ms(chunkInit), '', 'informational']);
    const sdk = freshProcessMs("require('@aws-sdk/client-s3');require('@aws-sdk/client-dynamodb');require('@aws-sdk/lib-dynamodb')");
    rows.push(['floor: the AWS SDK S3 + DynamoDB clients alone, module init', ms(sdk), '', 'informational']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'Lambda bundles and module init',
    rows,
    method: [
      `- Bundles: esbuild as CDK's \`NodejsFunction\` bundles them (minified, CommonJS, \`@aws-sdk/*\` left to the Lambda runtime, except for the /v1 function, which bundles the S3 presigner and leaves only the SDK's client and lib packages out); sizes in KiB.`,
      `- Tracing: each traced function gets the X-Ray SDK (Powertools Tracer) as a separate \`xray.js\` beside its \`index.js\`, required by a computed specifier on the first request of an instance with active tracing (lambdas/shared/observability/tracing.ts): its size is in no bundle row and its load in no init row; its own rows say what a traced cold start pays on top. Powertools Metrics is in each bundle and loaded on the first metric.`,
      `- Init: median of ${RUNS} fresh \`node\` processes timing \`require()\` of the bundle, with the AWS SDK loaded from node_modules as the runtime provides it. The "floor" row is the AWS SDK's S3 and DynamoDB clients alone: the memory REST, MCP and crawler functions need both on every request, so their init cannot go below it on this machine; what they add above it is their own code (isomorphic-git, yaml, zod, the MCP SDK). Moving those requires into the first request would meet the figure without making a cold start faster (Lambda's init phase runs at full CPU), so they stay at module scope and the miss is reported as it is.`,
    ].join('\n'),
  };
}
