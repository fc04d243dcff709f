import { type CatalogRecord, type CatalogTool, type ReadmeContent, type SearchDocument, searchDocumentOf } from '../../lambdas/catalog-core';

/** A valid catalog record with overridable fields, for tests that need exact control. */
export function makeRecord(slug: string, over: Partial<CatalogRecord> = {}): CatalogRecord {
  return {
    slug,
    name: `io.example/${slug}`,
    description: `The ${slug} server`,
    version: '1.0.0',
    status: 'active',
    repository: { url: `https://github.com/example/${slug}`, source: 'github' },
    packages: [{ registryType: 'npm', identifier: `@example/${slug}`, version: '1.0.0', transport: { type: 'stdio' } }],
    remotes: [],
    isOfficial: true,
    crawledAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-10-01T00:00:00.000Z',
    categories: ['Other'],
    github: { stars: 10, language: 'TypeScript', license: 'MIT License', licenseSpdx: 'MIT', pushedAt: '2026-10-20T00:00:00.000Z' },
    grades: { license: 'A', maintenance: 'A', quality: 'untested' },
    popularity: 0.5,
    trending: 0,
    hasIcon: false,
    ...over,
  };
}

export interface Entry {
  record: CatalogRecord;
  readme?: ReadmeContent;
  tools?: CatalogTool[];
}

export function docOf(e: Entry): SearchDocument {
  return searchDocumentOf(e);
}
