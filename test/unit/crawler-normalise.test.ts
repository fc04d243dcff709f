import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normaliseRow, precedenceKey, rowIdentity, serverJsonOf, isRejection } from '../../lambdas/crawler/domain/normalise';
import { serverJsonIssues } from '../../lambdas/crawler/domain/server-schema';
import type { NormalisedServer } from '../../lambdas/crawler/domain/types';
import { loadFixtureRows, loadSampleRows, SAMPLE_PATH } from '../support/crawler-fakes';
import { recordSkip } from '../support/skips';
import { serverJsonValidator } from '../support/registry-schemas';

const validate = serverJsonValidator();
const fixtureRows = loadFixtureRows();
const syntheticRows = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'crawler', 'synthetic-rows.json'), 'utf8')) as unknown[];
const sampleRows = loadSampleRows();
if (!sampleRows) {
  recordSkip({
    id: 'shared:crawler-normalise-sample',
    what: 'normalisation of the full registry sample (1,289 rows); ran on the committed 45 rows only',
    reason: `${SAMPLE_PATH} is absent (../shared is not checked out)`,
  });
}
const realRows = sampleRows ?? fixtureRows;

function ok(row: unknown): NormalisedServer {
  const r = normaliseRow(row);
  if (!r.ok) throw new Error(`rejected: ${r.rejection.reason}`);
  return r.server;
}

/** The latest row of a name. */
function byName(rows: unknown[], name: string): unknown {
  const row = rows.find((r) => {
    const id = rowIdentity(r);
    return !isRejection(id) && id.name === name && id.meta.isLatest === true;
  });
  if (row === undefined) throw new Error(`no row ${name}`);
  return row;
}

describe('normaliseRow on real registry rows', () => {
  it('turns every accepted row into a document valid against the official 2025-12-11 schema', () => {
    let accepted = 0;
    for (const row of [...realRows, ...syntheticRows]) {
      const r = normaliseRow(row);
      if (!r.ok) {
        expect(r.rejection.reason.length).toBeGreaterThan(0);
        continue;
      }
      accepted++;
      const doc = serverJsonOf(r.server);
      const valid = validate(doc);
      if (!valid) throw new Error(`${r.server.name}: ${JSON.stringify(validate.errors)}`);
    }
    expect(accepted).toBeGreaterThan(realRows.length * 0.9);
  });

  it('accepts every row of the sample (the known defects are all repairable)', () => {
    const rejected = realRows.map(normaliseRow).filter((r) => !r.ok);
    expect(rejected).toEqual([]);
  });

  it('agrees with ajv and the official schema on raw and normalised documents (zod mirror is faithful)', () => {
    const docs: unknown[] = [];
    for (const row of [...realRows, ...syntheticRows]) {
      const o = row as { server?: unknown };
      docs.push(o.server ?? row);
      const r = normaliseRow(row);
      if (r.ok) docs.push(serverJsonOf(r.server));
    }
    // A few hand-made near misses of each rule.
    const base = { name: 'io.github.a/b', description: 'd', version: '1.0.0' };
    docs.push(
      { ...base, description: '' },
      { ...base, description: 'x'.repeat(101) },
      { ...base, description: '😀'.repeat(100) },
      { ...base, name: 'ab' },
      { ...base, name: 'a/b/c' },
      { ...base, version: 'v'.repeat(256) },
      { ...base, websiteUrl: 'not a url' },
      { ...base, repository: { url: 'https://github.com/a/b' } },
      { ...base, packages: [{ registryType: 'npm', identifier: 'x', transport: { type: 'stdio' }, version: 'latest' }] },
      { ...base, packages: [{ registryType: 'npm', identifier: 'x', transport: { type: 'sse' } }] },
      { ...base, packages: [{ registryType: 'npm', identifier: 'x', transport: { type: 'stdio' }, fileSha256: 'ABC' }] },
      { ...base, packages: [{ registryType: 'npm', identifier: 'x', transport: { type: 'stdio' }, packageArguments: [{ type: 'positional' }] }] },
      { ...base, remotes: [{ type: 'streamable-http', url: 'ftp://x' }] },
      { ...base, remotes: [{ type: 'stdio' }] },
      { ...base, icons: [{ src: 'https://x/y.png', sizes: ['big'] }] },
      { ...base, icons: [{ src: `https://x/${'y'.repeat(260)}.png` }] },
    );
    for (const doc of docs) {
      const ajv = validate(doc) === true;
      const zod = serverJsonIssues(doc).length === 0;
      if (ajv !== zod)
        throw new Error(
          `ajv ${ajv} vs zod ${zod} on ${JSON.stringify(doc).slice(0, 300)}: ${JSON.stringify(validate.errors)} / ${serverJsonIssues(doc).join('; ')}`,
        );
    }
  });

  it('keeps a 2025-07-09 row that upstream already migrated to camelCase', () => {
    const s = ok(byName(fixtureRows, 'com.devcycle/mcp'));
    expect(s.declaredSchema).toBe('2025-07-09');
    expect(s.remotes.map((r) => r.type).sort()).toEqual(['sse', 'streamable-http']);
  });

  it('drops an empty repository and keeps the server', () => {
    const s = ok(byName(fixtureRows, 'com.jumpcloud/jumpcloud-genai'));
    expect(s.repository).toBeUndefined();
    expect(s.repairs).toContain('empty repository dropped');
  });

  it('drops package versions that say "latest"', () => {
    const s = ok(byName(fixtureRows, 'io.github.ycjcl868/mcp-server-fear-greed'));
    expect(s.packages.length).toBeGreaterThan(0);
    for (const p of s.packages) expect(p.version).toBeUndefined();
  });

  it('reads an "integer" input format as "number" and an empty argument type from its shape', () => {
    const redmine = ok(byName(fixtureRows, 'io.github.jztan/redmine-mcp-server'));
    const formats = (redmine.packages[0].environmentVariables ?? []).map((e) => (e as { format?: string }).format);
    expect(formats).toContain('number');
    expect(formats).not.toContain('integer');
    const letterhead = ok(byName(fixtureRows, 'io.github.easytocloud/mac-letterhead'));
    expect(letterhead.packages[0].packageArguments?.[0]).toEqual({ type: 'positional', value: 'mcp' });
  });

  it('keeps what install snippets are built from: remote URL variables, and value hints of named arguments', () => {
    const s = ok({
      server: {
        name: 'io.github.acme/tenant',
        description: 'd',
        version: '1.0.0',
        remotes: [
          {
            type: 'streamable-http',
            url: 'https://{tenant}.acme.dev/mcp',
            variables: { tenant: { description: 'Tenant', isRequired: true, choices: ['eu', 'us'] } },
          },
        ],
        packages: [
          {
            registryType: 'pypi',
            identifier: 'acme',
            version: '1.0.0',
            transport: { type: 'stdio' },
            packageArguments: [{ type: 'named', name: '--allowed-dir', valueHint: 'directory', isRequired: true }],
          },
        ],
      },
    });
    expect(s.remotes[0].variables).toEqual({ tenant: { description: 'Tenant', isRequired: true, choices: ['eu', 'us'] } });
    expect(s.packages[0].packageArguments).toEqual([{ type: 'named', name: '--allowed-dir', valueHint: 'directory', isRequired: true }]);
    expect(validate(serverJsonOf(s))).toBe(true);
  });

  it('maps the 2025-07-09 snake_case shape to camelCase', () => {
    const s = ok(syntheticRows[0]);
    expect(s.websiteUrl).toBe('https://example.com/snake');
    const p = s.packages[0];
    expect(p).toMatchObject({ registryType: 'npm', registryBaseUrl: 'https://registry.npmjs.org', runtimeHint: 'npx', transport: { type: 'stdio' } });
    expect(p.packageArguments).toEqual([
      { type: 'positional', isRequired: true, valueHint: 'database_url' },
      { type: 'named', name: '--read-only', isRepeated: false },
    ]);
    expect(p.environmentVariables).toEqual([{ name: 'PGPASSWORD', description: 'Password', isRequired: true, isSecret: true }]);
    expect(s.publishedAt).toBe('2025-09-01T10:00:00.123Z');
  });

  it('reads the legacy seed shape (version_detail, registry_name, transport_type)', () => {
    const s = ok(syntheticRows[1]);
    expect(s.version).toBe('0.0.1-seed');
    expect(s.isLatest).toBe(true);
    expect(s.packages[0]).toMatchObject({ registryType: 'oci', identifier: 'seeduser/legacy-seed-server', transport: { type: 'stdio' } });
    expect(s.remotes).toEqual([{ type: 'sse', url: 'https://seed.example.com/sse' }]);
    expect(s.repository?.id).toBe('935450522');
  });

  it('keeps deprecated servers with their status and gives a package without transport stdio', () => {
    const s = ok(syntheticRows[2]);
    expect(s.status).toBe('deprecated');
    expect(s.packages[0].transport).toEqual({ type: 'stdio' });
    expect(s.repairs).toContain('packages[0].transport: missing transport read as stdio');
  });

  it('rejects rows that cannot be normalised, with a reason', () => {
    const reasons = syntheticRows.slice(3, 7).map((row) => {
      const r = normaliseRow(row);
      if (r.ok) throw new Error(`${r.server.name} should be rejected`);
      return r.rejection.code;
    });
    expect(reasons).toEqual(['invalid_name', 'invalid_description', 'invalid_remote', 'missing_version']);
    expect(normaliseRow('nope')).toMatchObject({ ok: false, rejection: { code: 'not_an_object' } });
    const unknownStatus = {
      server: { name: 'io.github.a/b', description: 'd', version: '1' },
      _meta: { 'io.modelcontextprotocol.registry/official': { status: 'paused' } },
    };
    expect(normaliseRow(unknownStatus)).toMatchObject({ ok: false, rejection: { code: 'unknown_status', name: 'io.github.a/b' } });
    const unknownRegistry = { name: 'io.github.a/b', description: 'd', version_detail: { version: '1' }, packages: [{ registry_name: 'unknown', name: 'x' }] };
    expect(normaliseRow(unknownRegistry)).toMatchObject({ ok: false, rejection: { code: 'invalid_package' } });
  });

  it('cuts descriptions over 100 characters', () => {
    const s = ok(syntheticRows[7]);
    expect(Array.from(s.description)).toHaveLength(100);
    expect(s.description.endsWith('…')).toBe(true);
  });
});

describe('row identity and version precedence', () => {
  it('orders rows of one name: isLatest, then publish time, then version', () => {
    const a = precedenceKey({ isLatest: false, publishedAt: '2025-10-08T18:37:24.013Z' }, '6.1.2');
    const b = precedenceKey({ isLatest: true, publishedAt: '2025-10-01T20:03:22.897Z' }, '6.1.1');
    const c = precedenceKey({ isLatest: false, publishedAt: '2025-10-01T20:03:22.897Z' }, '6.1.1');
    expect(b > a).toBe(true);
    expect(a > c).toBe(true);
  });

  it('picks exactly the isLatest row of every name in the real data', () => {
    const best = new Map<string, { precedence: string; latest: boolean }>();
    for (const row of realRows) {
      const id = rowIdentity(row);
      if (isRejection(id)) throw new Error(id.reason);
      const b = best.get(id.name);
      if (!b || id.precedence > b.precedence) best.set(id.name, { precedence: id.precedence, latest: id.meta.isLatest === true });
    }
    for (const [name, b] of best) if (!b.latest) throw new Error(`${name}: the best row is not the latest`);
    if (sampleRows) expect(best.size).toBe(675);
  });
});
