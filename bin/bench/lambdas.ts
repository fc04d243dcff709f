import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { type CfnFunction, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { build } from 'esbuild';
import { SDK_EXTERNALS } from '../../lib/bundling-externals';
import { CatalogStack } from '../../lib/catalog-stack';
import { ms, summarize, verdict, type BenchSection } from './stats';

/**
 * Every Lambda's bundle as CDK itself builds it, and its module init in a fresh process (DESIGN.md:
 * under 1 MB minified, init under 150 ms locally). The stack is synthesized as `cdk synth` does (the
 * feature flags of cdk.json, a region outside us-east-1 so the edge function gets its stack too) and
 * each function's asset is read from the cloud assembly: no second build that could differ from
 * CDK's (it did: 840 KiB for the crawler against the 720 KiB CDK ships, another set of externals).
 * Functions are found, not listed, so a function added to the stack is measured without a change
 * here. With the AWS SDK's own load time as the floor the functions that need it cannot go below.
 */

const ROOT = join(__dirname, '..', '..');
const RUNS = 7;

/** A readable name for a function, from its construct path (unknown ones keep the path). */
const NAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^McpCatalog\/Api\/Function$/, 'catalog'],
  [/^McpCatalog\/Api\/FavoritesFunction$/, 'favorites'],
  [/^McpCatalog\/OAuth\/Function$/, 'OAuth front'],
  [/^McpCatalog\/Memory\/Function$/, 'memory REST (/v1)'],
  [/^McpCatalog\/Mcp\/Function$/, 'MCP (/mcp)'],
  [/^McpCatalog\/MemoryGit\/Function$/, 'git remote (/v1/memories/<name>.git)'],
  [/^McpCatalog\/Crawler\/Function$/, 'crawler'],
  [/^McpCatalog\/Checks\/Function$/, 'check function (health checks)'],
  [/^McpCatalog\/Org\/Function$/, 'organisation registry'],
  [/^McpCatalog\/Site\/Function$/, 'site'],
  [/IconNotFound$/, 'icon-not-found (Lambda@Edge)'],
  [/EdgeLogRetention\/Function$/, 'edge log retention (daily)'],
  [/^McpCatalog\/OriginSecretRotation\/Function$/, 'origin secret rotation'],
];

interface Bundle {
  name: string;
  path: string;
  file: string;
}

/** The functions of the synthesized app whose code is an asset CDK bundled (`index.js`). */
function synthesizedBundles(outdir: string): Bundle[] {
  const context = (JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
  const app = new App({ context, outdir });
  new CatalogStack(app, 'McpCatalog', { env: { account: '123456789012', region: 'eu-west-1' } });
  const assembly = app.synth();
  const out: Bundle[] = [];
  for (const c of app.node.findAll()) {
    if (!(c instanceof LambdaFunction)) continue;
    const cfn = c.node.defaultChild as CfnFunction;
    const code = Stack.of(c).resolve(cfn.code) as { s3Key?: string; S3Key?: string };
    const key = code.s3Key ?? code.S3Key;
    if (typeof key !== 'string') continue;
    const file = join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.js');
    if (!existsSync(file)) continue; // CDK's own helper functions (custom resources) ship other layouts
    const name = NAMES.find(([re]) => re.test(c.node.path))?.[1] ?? c.node.path;
    out.push({ name, path: c.node.path, file });
  }
  return out;
}

/**
 * What the Lambda Node.js runtime defines before it loads a handler and a streaming function needs
 * at module load (the git remote calls `awslambda.streamifyResponse` there): identity stand-ins, so
 * its init is measured like the others'.
 */
const LAMBDA_GLOBALS = 'globalThis.awslambda={streamifyResponse:(f)=>f,HttpResponseStream:{from:(s)=>s}}';

/** The X-Ray part of tracing, built beside every traced function's index.js (lib/lambda-function.ts) and required on its first request. */
const XRAY_CHUNK = 'lambdas/shared/observability/xray.ts';

/** One entry bundled as NodejsFunction does (minified CommonJS, `external` left to the runtime): the X-Ray chunk, which is in no function's index.js. */
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

/**
 * The packages a bundle requires from outside itself while it loads: the AWS SDK clients the Lambda
 * runtime provides (and sharp from the crawler's layer), recorded by a hook on Node's module loader.
 */
function externalsAtLoad(file: string): string[] {
  const hook = `const M=require('node:module');const seen=new Set();const load=M._load;M._load=function(r,p,...a){if(p&&p.filename===${JSON.stringify(file)}&&!M.isBuiltin(r))seen.add(r);return load.call(this,r,p,...a)}`;
  const out = spawnSync(
    process.execPath,
    ['-e', `${LAMBDA_GLOBALS};${hook};require(${JSON.stringify(file)});process.stdout.write(JSON.stringify([...seen]))`],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, AWS_REGION: 'us-east-1', LOG_LEVEL: 'SILENT' },
    },
  );
  if (out.status !== 0) throw new Error(`loading failed: ${out.stderr}`);
  return (JSON.parse(out.stdout) as string[]).sort();
}

/** Median milliseconds of `code` in fresh Node processes (what a cold start pays to load it), after the untimed `before`. */
function freshProcessMs(code: string, before = ''): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = spawnSync(
      process.execPath,
      ['-e', `${before};const t=process.hrtime.bigint();${code};process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))`],
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
  // Inside the repository, so `require` finds @aws-sdk (and sharp, the crawler's layer) in
  // node_modules as Lambda finds them in the runtime and the layer.
  const dir = join(ROOT, '.bench', 'cdk.out');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rows: BenchSection['rows'] = [];
  try {
    log('synthesizing the stack (CDK bundles every function with the local esbuild)');
    const bundles = synthesizedBundles(dir);
    if (bundles.length < 7) throw new Error(`expected at least 7 bundled functions, found ${bundles.map((b) => b.path).join(', ')}`);
    for (const b of bundles.sort((x, y) => x.name.localeCompare(y.name))) {
      const size = statSync(b.file).size;
      log(`${b.name}: ${(size / 1024).toFixed(0)} KiB (${b.path})`);
      const init = freshProcessMs(`${LAMBDA_GLOBALS};require(${JSON.stringify(b.file)})`);
      rows.push([`${b.name}: bundle, minified`, `${(size / 1024).toFixed(0)} KiB`, '< 1 MiB', verdict(size < 1024 * 1024)]);
      rows.push([`${b.name}: module init`, ms(init), '< 150 ms', verdict(init < 150)]);
      // What of it is the SDK clients the runtime provides: the packages the bundle requires while it loads, alone in a fresh process.
      const externals = externalsAtLoad(b.file);
      if (externals.length > 0) {
        const sdk = freshProcessMs(externals.map((e) => `require(${JSON.stringify(e)})`).join(';'));
        rows.push([
          `${b.name}: module init, of which the packages it loads from the runtime alone (${externals.join(', ')})`,
          `${ms(sdk)} (${((100 * sdk) / init).toFixed(0)}%); the rest, its own code: ${ms(Math.max(0, init - sdk))}`,
          '',
          'informational',
        ]);
      }
    }
    log('bundling the X-Ray chunk');
    const chunk = join(dir, 'xray.js');
    const chunkSize = await bundle(XRAY_CHUNK, chunk, SDK_EXTERNALS);
    const chunkInit = freshProcessMs(`require(${JSON.stringify(chunk)})`);
    rows.push(['X-Ray chunk (xray.js, beside each traced function): size', `${(chunkSize / 1024).toFixed(0)} KiB`, 'not in any bundle above', 'informational']);
    rows.push(["X-Ray chunk: load, paid by a traced instance's first request", ms(chunkInit), '', 'informational']);
    const floor = "require('@aws-sdk/client-s3');require('@aws-sdk/client-dynamodb');require('@aws-sdk/lib-dynamodb')";
    const sdk = freshProcessMs(floor);
    rows.push(['floor: the AWS SDK S3 + DynamoDB clients alone, module init', ms(sdk), '', 'informational']);
    // Clients loaded on the first request (lazily), each after what is loaded by then.
    const secrets = "require('@aws-sdk/client-secrets-manager')";
    rows.push([
      "Secrets Manager client (cursor keys, origin secret): load after the floor, paid by a memory function's first request",
      ms(freshProcessMs(secrets, floor)),
      '',
      'informational',
    ]);
    rows.push([
      'SSM client (settings parameter): load after the floor and Secrets Manager, paid by the first request of an MCP or git remote instance',
      ms(freshProcessMs("require('@aws-sdk/client-ssm')", `${floor};${secrets}`)),
      '',
      'informational',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'Lambda bundles and module init',
    rows,
    method: [
      "- Bundles: the `index.js` of each function's asset in the cloud assembly CDK synthesizes (`CatalogStack` with cdk.json's feature flags, in eu-west-1 so the Lambda@Edge function is bundled too), i.e. exactly what `cdk deploy` uploads: each construct's own esbuild options and externals (the AWS SDK left to the runtime; the /v1 function keeps the S3 presigner; the crawler leaves sharp to its layer). Every bundled function of the stack is measured, found in the construct tree; sizes in KiB.",
      `- Tracing: each traced function gets the X-Ray SDK (Powertools Tracer) as a separate \`xray.js\` beside its \`index.js\`, required by a computed specifier on the first request of an instance with active tracing (lambdas/shared/observability/tracing.ts): its size is in no bundle row and its load in no init row; its own rows say what a traced cold start pays on top. Powertools Metrics is in each bundle and loaded on the first metric. The AWS SDK clients a function needs only for secrets and its settings parameter (Secrets Manager, SSM) are loaded on its first request too; their rows are the load of each on top of what is loaded by then.`,
      `- Init: median of ${RUNS} fresh \`node\` processes timing \`require()\` of the bundle, with the AWS SDK (and sharp) loaded from node_modules as the runtime and the layer provide them. Under each init row, the packages that bundle requires from outside itself while it loads (found by a hook on Node's module loader in a fresh process: the AWS SDK clients the runtime provides, sharp from the crawler's layer), timed alone in ${RUNS} more fresh processes (median), and the rest of the init, the function's own code, by difference. The "floor" row is the AWS SDK's S3 and DynamoDB clients alone: the memory REST, MCP and git remote functions load both at init (the rows under theirs), so their init cannot go below it on this machine; what they add above it is their own code (isomorphic-git, yaml, zod, the MCP SDK). Moving those requires into the first request would meet the figure without making a cold start faster (Lambda's init phase runs at full CPU), so they stay at module scope.`,
      "- Where the init goes (`node --cpu-prof` of a `require()` of each bundle built unminified, samples attributed to the bundle's source modules, and the time between esbuild's module markers): the SDK clients' own load (the floor row), compiling the bundle (V8 pre-parses all of it at every cold start: about 30 ms a MB here) and, of the code that runs, zod schema construction. The crawler and the check function built the category classifier's 737 keyword patterns at load with `[\\p{L}\\p{N}]` and the `iu` flags, whose Unicode case closure V8 computes per pattern (about 200 ms of the crawler's init, and over a second of its first classifications): the patterns now run on a normalised copy of the text with a small ASCII letter class (same scores on the 675-server sample and 20,000 fuzzed texts; `lambdas/crawler/domain/classify.ts`). The check function has its own wiring (`check-wiring.ts`) and no longer loads the crawl's unit, the classifier or the registry schemas. fflate (the zip writer, which builds its tables when it loads) is loaded by the first zip export of a memory function, the only request that uses it. Interleaved runs of the bundles before and after these changes (CPU time of the `require()`, 11 fresh processes each, load average about 12): check function 280 → 168 ms, crawler 284 → 195 ms, MCP 244 → 245, git remote 225 → 212, /v1 203 → 206 ms (the memory functions' change, a few ms, is within the noise at that load).",
      "- Then (issue 29), work removed rather than moved: zod 4.1 → 4.6, whose schemas cost about half as much to build (the MCP SDK's protocol types, which build every protocol schema at import, 28 → 16 ms); zod's locales (170 KB) out of every bundle (the OpenAPI extension is given `ZodType`, not the zod namespace as a value, `lambdas/shared/zod-openapi.ts`); the /v1 response schemas out of the /v1 and git remote functions (`response-schemas.ts`: only their types are used at run time; the contract document and the tests build them); isomorphic-git's ES module build (`BUNDLE_ALIASES`: esbuild keeps the six object functions the core calls, 120 KB less per memory function); Ajv out of the MCP function's `index.js` (the SDK's server imports it for elicitation, which these servers never use; `ajv-validator.js` beside it is loaded if a schema is ever asked for), and no Ajv built per request (15 ms on an instance's first request, 1 ms on each later one). `test/unit/bundle-init.test.ts` and the MCP infra test hold these. Interleaved runs of the bundles before and after (CPU time of the `require()`, 11 fresh processes each, alternating, load average 3-5; the floor measured 87 ms in the same runs): /v1 163 → 129 ms, git remote 161 → 129, MCP 190 → 140, crawler 152 → 123; bundles /v1 978 → 668 KiB, git remote 981 → 671, MCP 974 → 696, crawler 801 → 781, and the catalog's 905 → 725 and the site's and organisation registry's 887 → 700 and 885 → 705 (zod's locales).",
      "- What is left, by function (what the rows above measure): the memory functions (/v1, MCP, git remote) load the S3 and DynamoDB clients at init (the floor row) and compile a bundle of about 0.7 MB (about 22 ms); above that, their own code is about 20 ms (the request schemas, isomorphic-git's dependencies, yaml, and for /mcp the MCP SDK's protocol types), all used by a typical first request: deferring them would move the cost to the first request, not remove it. The crawler's own code is mostly the MCP SDK client's protocol types and the registry schemas, both used by every crawl unit. When the floor row is well above its 85 ms (a loaded machine), every init row is inflated by about the same factor: the verdicts of such a run say more about the load than about the bundles, and the interleaved before/after figures above are the comparison.",
    ].join('\n'),
  };
}
