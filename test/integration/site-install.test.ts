/**
 * What a reader copies from a server page: the text of each snippet's `<code>` element (the copy
 * button copies its textContent), read from the page the site serves for real registry entries
 * (test/fixtures/install-clients, made into records by the crawler's code), GitHub's server first.
 */
import { DynamoCatalogStore, type CatalogRecord, installOptions } from '../../lambdas/catalog-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentClient, dynamoClient, loadBatchSdkBudget } from '../../lambdas/shared/aws/clients';
import { checkSnippet } from '../support/install-checker';
import { sampleRecords } from '../support/sample-records';
import { startTestSite, type TestSite } from '../support/site-harness';

const rows = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'install-clients', 'registry-rows.json'), 'utf8')) as unknown[];
const records: CatalogRecord[] = sampleRecords(rows).map((r) => r.record);

let t: TestSite;

beforeAll(async () => {
  t = await startTestSite();
  // Written as the seed writes (a bulk budget): a loaded DynamoDB Local may take over 1.5 s for a batch.
  const { config } = t.catalog;
  const ddb = dynamoClient({ region: config.region, dynamoEndpoint: config.dynamoEndpoint }, loadBatchSdkBudget());
  await new DynamoCatalogStore(documentClient(ddb), config.catalogTable).put(records.map((record) => ({ record })));
  ddb.destroy();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' };

/** Each snippet on a page as the copy button reads it: its label and its code element's text. */
async function copied(slug: string): Promise<Array<{ label: string; text: string }>> {
  const res = await t.get(`/servers/${slug}`);
  expect(res.status).toBe(200);
  const page = await res.text();
  return [...page.matchAll(/<summary>([^<]+) <span class="muted">[\s\S]*?<code id="snippet-\d+-\d+" class="language-\w+">([^<]*)<\/code>/g)].map((m) => ({
    label: m[1],
    text: m[2].replace(/&(lt|gt|quot|#39|amp);/g, (e) => ENTITIES[e]),
  }));
}

test("GitHub's server page: what a reader copies is one docker run, its flags and the image once, with the tag", async () => {
  const snippets = await copied('io-github-github-github-mcp-server');
  expect(snippets.map((s) => s.label)).toEqual(['Claude Desktop', 'Claude Code', 'VS Code', 'Cursor']);
  const byLabel = Object.fromEntries(snippets.map((s) => [s.label, s.text]));
  expect(byLabel['Claude Code']).toBe(
    "claude mcp add github-mcp-server --env 'GITHUB_PERSONAL_ACCESS_TOKEN=<GITHUB_PERSONAL_ACCESS_TOKEN>' -- docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server:0.18.0",
  );
  const args = ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server:0.18.0'];
  for (const label of ['Claude Desktop', 'Cursor']) {
    expect(JSON.parse(byLabel[label])).toEqual({
      mcpServers: { 'github-mcp-server': { command: 'docker', args, env: { GITHUB_PERSONAL_ACCESS_TOKEN: '<GITHUB_PERSONAL_ACCESS_TOKEN>' } } },
    });
  }
  expect(JSON.parse(byLabel['VS Code'])).toEqual({
    inputs: [
      { type: 'promptString', id: 'GITHUB_PERSONAL_ACCESS_TOKEN', description: 'Your GitHub personal access token with appropriate scopes.', password: true },
    ],
    servers: {
      'github-mcp-server': { type: 'stdio', command: 'docker', args, env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${input:GITHUB_PERSONAL_ACCESS_TOKEN}' } },
    },
  });
});

test('every fixture server page: each copied snippet is the builder’s and passes the checker', async () => {
  for (const record of records) {
    const options = installOptions(record);
    const built = options.flatMap((o) => o.snippets.map((s) => ({ o, s })));
    const snippets = await copied(record.slug);
    expect(snippets.map((s) => s.text)).toEqual(built.map((b) => b.s.text));
    const problems = built.flatMap(({ o, s }, i) => checkSnippet(o, { ...s, text: snippets[i].text }).map((p) => `${record.name} · ${s.label}: ${p}`));
    expect(problems).toEqual([]);
  }
});
