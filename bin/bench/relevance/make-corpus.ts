/**
 * Regenerates `test/fixtures/relevance/corpus.json` from the real registry sample in `../shared`
 * (`npx tsx bin/bench/relevance/make-corpus.ts`): the latest row of each of its 675 names, cut
 * down to what the ranker and the classifier read, so the judged figures need nothing outside
 * this repository.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS_PATH } from './corpus';

const SAMPLE = join(__dirname, '..', '..', '..', '..', 'shared', 'reference', 'registry', 'samples', 'mcp-insights-servers-2025-10-21.json');

type Json = Record<string, unknown>;
const pick = (o: Json, keys: string[]): Json => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

const rows = JSON.parse(readFileSync(SAMPLE, 'utf8').replace(/^\uFEFF/, '')) as Array<{ server: Json; _meta: Record<string, Json> }>;
const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const latest = rows.filter((r) => r._meta[OFFICIAL]?.isLatest === true);
const trimmed = latest.map((r) => ({
  server: {
    ...pick(r.server, ['name', 'title', 'description', 'version', 'websiteUrl']),
    ...(r.server.repository !== undefined && { repository: r.server.repository }),
    ...(Array.isArray(r.server.packages) && {
      packages: (r.server.packages as Json[]).map((p) => pick(p, ['registryType', 'identifier', 'version', 'transport'])),
    }),
    ...(Array.isArray(r.server.remotes) && { remotes: (r.server.remotes as Json[]).map((x) => pick(x, ['type', 'url'])) }),
  },
  _meta: { [OFFICIAL]: pick(r._meta[OFFICIAL] ?? {}, ['status', 'publishedAt', 'isLatest']) },
}));
const out = {
  source:
    'joelverhagen/mcp-insights servers.json at 268a528b (2025-10-21), via ../shared/reference/registry/samples/mcp-insights-servers-2025-10-21.json: the isLatest row of every name, with the fields search and classification read',
  rows: trimmed,
};
writeFileSync(CORPUS_PATH, `${JSON.stringify(out, null, 0).replace(/\},\{"server"/g, '},\n{"server"')}\n`);
console.log(`${trimmed.length} rows written to ${CORPUS_PATH}`);
