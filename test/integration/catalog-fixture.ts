import { renderIcon } from '../../lambdas/catalog-core';
import type { TestCatalog } from '../support/catalog-harness';
import { docOf, makeRecord, type Entry } from '../support/records';

/**
 * A small catalog with known answers: every filter, sort key and tie is exercised by at least
 * one pair of entries.
 */
export const FIXTURE: Entry[] = [
  {
    record: makeRecord('alpha-db', {
      name: 'com.alpha/postgres-mcp',
      title: 'Alpha Postgres',
      description: 'Query Postgres databases safely',
      categories: ['Data & Databases'],
      github: { stars: 500, language: 'Go', license: 'Apache License 2.0', licenseSpdx: 'Apache-2.0', pushedAt: '2026-11-01T00:00:00.000Z' },
      popularity: 0.9,
      downloads: 12000,
      trending: 40,
      updatedAt: '2026-11-10T00:00:00.000Z',
      hasIcon: true,
      remotes: [{ type: 'streamable-http', url: 'https://alpha.example.com/mcp' }],
      health: { live: true, checkedAt: '2026-11-20T00:00:00.000Z', toolCount: 2 },
      toolCount: 2,
    }),
    readme: { content: '# Alpha\n\nA zanzibar-grade connector for Postgres.', path: 'README.md', size: 46, sha: 'a1' },
    tools: [
      { name: 'run_query', description: 'Run a read-only SQL query', inputSchema: { type: 'object', properties: { sql: { type: 'string' } } } },
      { name: 'list_tables', description: 'List tables' },
    ],
  },
  {
    record: makeRecord('beta-search', {
      name: 'io.github.beta/web-search',
      title: undefined,
      description: 'Search the web with many engines',
      isOfficial: false,
      categories: ['Search & Web', 'AI & Machine Learning'],
      packages: [{ registryType: 'pypi', identifier: 'beta-search', version: '0.3.0', transport: { type: 'stdio' } }],
      github: { stars: 500, language: 'Python', license: 'GNU General Public License v3.0', licenseSpdx: 'GPL-3.0', pushedAt: '2026-06-01T00:00:00.000Z' },
      popularity: 0.9,
      downloads: 3000,
      trending: 40,
      updatedAt: '2026-11-10T00:00:00.000Z',
    }),
    tools: [{ name: 'quokka_lookup', description: 'Looks up things' }],
  },
  {
    record: makeRecord('gamma-remote', {
      name: 'ai.gamma/remote-only',
      title: 'Gamma Cloud',
      description: 'A hosted deployment helper',
      categories: ['Cloud & DevOps'],
      packages: [],
      remotes: [{ type: 'sse', url: 'https://gamma.example.com/sse' }],
      github: undefined,
      repository: undefined,
      grades: { license: null, maintenance: null, quality: 'untested' },
      popularity: 0.2,
      trending: 0,
      updatedAt: undefined,
      crawledAt: '2026-09-09T09:09:09.000Z',
      health: { live: false, checkedAt: '2026-11-19T00:00:00.000Z', authRequired: true },
    }),
  },
  {
    record: makeRecord('delta-docker', {
      name: 'com.delta/container-tools',
      title: 'Delta Containers',
      description: 'Manage containers and images',
      categories: ['Cloud & DevOps', 'Development & Coding'],
      packages: [{ registryType: 'oci', identifier: 'docker.io/delta/tools', version: '2.0.0', transport: { type: 'stdio' } }],
      github: { stars: 50, language: 'Rust', license: 'MIT License', licenseSpdx: 'MIT', pushedAt: '2025-01-01T00:00:00.000Z' },
      status: 'deprecated',
      popularity: 0.4,
      updatedAt: '2026-08-01T00:00:00.000Z',
    }),
    readme: { content: 'Containers everywhere. Mentions postgres once.', path: 'README.md', size: 45, sha: 'd1' },
  },
  {
    record: makeRecord('epsilon-nuget', {
      name: 'com.epsilon/dotnet-mcp',
      description: 'A .NET toolbox',
      categories: ['Development & Coding'],
      packages: [{ registryType: 'nuget', identifier: 'Epsilon.Mcp', version: '1.2.3', transport: { type: 'stdio' } }],
      github: { stars: 5, language: 'C#', license: 'Other', licenseSpdx: 'NOASSERTION' },
      popularity: 0.1,
      updatedAt: '2026-07-01T00:00:00.000Z',
    }),
  },
  {
    record: makeRecord('zeta-mcpb', {
      name: 'com.zeta/bundle',
      title: 'Zeta Bundle',
      description: 'Desktop bundle for notes',
      categories: ['Knowledge & Memory'],
      packages: [
        { registryType: 'mcpb', identifier: 'https://example.com/zeta.mcpb', version: '1.0.0', fileSha256: 'a'.repeat(64), transport: { type: 'stdio' } },
        { registryType: 'npm', identifier: '@zeta/bundle', version: '1.0.0', transport: { type: 'stdio' } },
      ],
      github: { stars: 50, language: 'TypeScript', license: 'MIT License', licenseSpdx: 'MIT' },
      popularity: 0.4,
      downloads: 800,
      trending: 3,
      updatedAt: '2026-08-01T00:00:00.000Z',
    }),
  },
];

export async function loadFixture(cat: TestCatalog, entries: Entry[] = FIXTURE): Promise<void> {
  await cat.deps.store.put(entries.map((e) => ({ record: e.record, readme: e.readme ?? null, tools: e.tools ?? null })));
  await cat.deps.index.upsert(entries.map(docOf));
  for (const e of entries) if (e.record.hasIcon) await cat.deps.icons.putIfAbsent(e.record.slug, await renderIcon(1));
}
