import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { BUNDLE_ALIASES, MEMORY_API_EXTERNALS, SDK_EXTERNALS } from '../../lib/bundling-externals';

/**
 * What the functions' bundles keep out, for their module init (DESIGN: under 150 ms; BENCHMARKS.md,
 * "Lambda bundles and module init"): code no request of theirs runs, which a cold start would still
 * compile and, for schemas, build. Each entry is bundled as its construct bundles it (the same
 * externals and aliases), and the modules that went into it are read from esbuild's metafile.
 */

const ROOT = join(__dirname, '..', '..');

async function inputsOf(entry: string, external: readonly string[]): Promise<string[]> {
  const { metafile } = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    outfile: 'index.js',
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: [...external],
    alias: { ...BUNDLE_ALIASES },
    metafile: true,
    logLevel: 'silent',
  });
  // Every module esbuild visited is an input; those tree shaking removed whole add no bytes to the output.
  const [output] = Object.values((metafile as Metafile).outputs);
  return Object.entries(output?.inputs ?? {})
    .filter(([, i]) => i.bytesInOutput > 0)
    .map(([f]) => f);
}

/** zod's error messages in languages other than English (the default it configures itself). */
const isForeignZodLocale = (f: string): boolean => /node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)/.test(f);

describe.each([
  ['memory REST (/v1)', 'lambdas/memory-api/handler.ts', MEMORY_API_EXTERNALS],
  ['git remote', 'lambdas/memory-api/git-handler.ts', MEMORY_API_EXTERNALS],
  ['MCP (/mcp)', 'lambdas/mcp/handler.ts', SDK_EXTERNALS],
])('%s bundle', (name, entry, external) => {
  let inputs: string[];
  beforeAll(async () => {
    inputs = await inputsOf(entry, external);
  }, 60_000);

  it("keeps zod's locales out (the zod namespace is never used as a value)", () => {
    expect(inputs.filter(isForeignZodLocale)).toEqual([]);
  });

  it("takes isomorphic-git's ES module build, of which it keeps the object functions the core calls", () => {
    expect(inputs).toContain('node_modules/isomorphic-git/index.js');
    expect(inputs).not.toContain('node_modules/isomorphic-git/index.cjs');
  });

  if (name !== 'MCP (/mcp)') {
    it('builds the request schemas only: the response schemas are for the contract document and the tests', () => {
      expect(inputs).toContain('lambdas/memory-api/schemas.ts');
      expect(inputs).not.toContain('lambdas/memory-api/response-schemas.ts');
      expect(inputs).not.toContain('lambdas/memory-api/openapi.ts');
    });
  }
});
