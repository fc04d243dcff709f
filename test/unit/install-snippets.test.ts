/**
 * Every install snippet the site shows, through the per-client checker (test/support/install-checker.ts,
 * rules from the clients' documentation): the committed real rows always, every server of the
 * real registry sample when ../shared is checked out. The site shows the latest version of each
 * server only; older versions are checked too, since the same builder would show them.
 *
 * The checker is tested on its own first: each fault it exists for, written by hand, is caught.
 */
import { type RegistryPackage, type RegistryRemote, installOptions, type InstallOption, type Snippet } from '../../lambdas/catalog-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSampleRows } from '../support/crawler-fakes';
import { checkRecord, checkSnippet } from '../support/install-checker';
import { sampleRecords } from '../support/sample-records';

const github: RegistryPackage = {
  registryType: 'oci',
  identifier: 'ghcr.io/github/github-mcp-server:0.18.0',
  transport: { type: 'stdio' },
  environmentVariables: [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', isRequired: true, isSecret: true }],
};
const npm: RegistryPackage = {
  registryType: 'npm',
  identifier: '@acme/weather',
  version: '1.2.0',
  transport: { type: 'stdio' },
  packageArguments: [{ type: 'named', name: '--region', isRequired: true }],
};
const remote: RegistryRemote = {
  type: 'streamable-http',
  url: 'https://{tenant}.acme.dev/mcp',
  headers: [{ name: 'X-API-Key', isRequired: true, isSecret: true }],
};

function problems(source: InstallOption['source'], client: Snippet['client'], text: string): string[] {
  const snippet: Snippet = { client, label: client, where: '', language: 'text', text };
  return checkSnippet({ id: 'x', title: 'x', kind: 'package', snippets: [snippet], inputs: [], notes: [], source }, snippet);
}

const desktop = (command: string, args: string[], env?: Record<string, string>) =>
  JSON.stringify({ mcpServers: { x: { command, args, ...(env && { env }) } } });

describe('the checker catches each fault it is for', () => {
  test('docker: run twice, the image twice (the snippet issue 23 found on GitHub’s page)', () => {
    const line =
      "claude mcp add x --env GITHUB_PERSONAL_ACCESS_TOKEN='<T>' -- docker run run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server:0.18.0";
    expect(problems({ package: github }, 'claude-code', line)).toEqual(
      expect.arrayContaining([expect.stringMatching(/image is run, expected/), expect.stringMatching(/image is named 2 times/)]),
    );
    const twice = desktop(
      'docker',
      ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server', 'ghcr.io/github/github-mcp-server:0.18.0'],
      {
        GITHUB_PERSONAL_ACCESS_TOKEN: '<T>',
      },
    );
    expect(problems({ package: github }, 'claude-desktop', twice)).toEqual(
      expect.arrayContaining([expect.stringMatching(/image is .*github-mcp-server, expected .*:0\.18\.0/)]),
    );
  });

  test('docker: a variable set for docker but not passed into the container; an unknown option', () => {
    expect(
      problems(
        { package: github },
        'cursor',
        desktop('docker', ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server:0.18.0'], { GITHUB_PERSONAL_ACCESS_TOKEN: '<T>' }),
      ),
    ).toEqual([expect.stringMatching(/not passed into the container/)]);
    expect(problems({ package: github }, 'cursor', desktop('docker', ['run', '--bogus', 'ghcr.io/github/github-mcp-server:0.18.0']))).toEqual(
      expect.arrayContaining([expect.stringMatching(/unknown option --bogus/), expect.stringMatching(/GITHUB_PERSONAL_ACCESS_TOKEN missing/)]),
    );
  });

  test('a placeholder named after a flag', () => {
    expect(problems({ package: npm }, 'claude-desktop', desktop('npx', ['-y', '@acme/weather@1.2.0', '--region', '<--region>']))).toEqual([
      'a placeholder names a flag: <--region>',
    ]);
  });

  test('npx: without -y, the package named twice, another version, a required flag missing', () => {
    expect(problems({ package: npm }, 'claude-desktop', desktop('npx', ['@acme/weather@1.2.0', '--region', 'eu']))).toEqual([
      expect.stringMatching(/without -y/),
    ]);
    expect(problems({ package: npm }, 'claude-desktop', desktop('npx', ['-y', '@acme/weather@latest', '@acme/weather@1.2.0', '--region', 'eu']))).toEqual([
      expect.stringMatching(/version latest/),
      expect.stringMatching(/named twice/),
    ]);
    expect(problems({ package: npm }, 'claude-desktop', desktop('npx', ['-y', '@acme/weather@1.2.0']))).toEqual(['required argument --region missing']);
  });

  test('uvx and dnx: the package and its version once, dnx with --yes', () => {
    const pypi: RegistryPackage = { registryType: 'pypi', identifier: 'weather', version: '1.0', transport: { type: 'stdio' } };
    expect(problems({ package: pypi }, 'cursor', desktop('uvx', ['--from', 'weather==1.0', 'weather@1.0']))).toEqual([
      expect.stringMatching(/a version both in --from and on the command/),
    ]);
    expect(problems({ package: pypi }, 'cursor', desktop('uvx', ['weather==0.9']))).toEqual([expect.stringMatching(/version 0\.9/)]);
    const nuget: RegistryPackage = { registryType: 'nuget', identifier: 'Acme.Weather', version: '2.0', transport: { type: 'stdio' } };
    expect(problems({ package: nuget }, 'cursor', desktop('dnx', ['Acme.Weather@2.0']))).toEqual([expect.stringMatching(/without --yes/)]);
    expect(problems({ package: nuget }, 'cursor', desktop('npx', ['-y', 'Acme.Weather@2.0']))).toEqual(['nuget package run with npx']);
  });

  test('the shell: a placeholder left unquoted is a redirection; a $ is an expansion', () => {
    expect(problems({ package: npm }, 'claude-code', 'claude mcp add x -- npx -y @acme/weather@1.2.0 --region <REGION>')).toEqual(
      expect.arrayContaining([expect.stringMatching(/operator/)]),
    );
    expect(problems({ package: npm }, 'claude-code', 'claude mcp add x -- npx -y @acme/weather@1.2.0 --region $REGION')).toEqual([
      expect.stringMatching(/expands a variable/),
    ]);
  });

  test('claude mcp add: --env takes every word up to the next option, so the name must come first', () => {
    expect(problems({ package: npm }, 'claude-code', 'claude mcp add --env A=1 x -- npx -y @acme/weather@1.2.0 --region eu')).toEqual(
      expect.arrayContaining([expect.stringMatching(/--env "x" is not KEY=value/)]),
    );
  });

  test('secrets: inlined anywhere, or a VS Code prompt that is not masked', () => {
    expect(
      problems(
        { package: github },
        'claude-desktop',
        desktop('docker', ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server:0.18.0'], {
          GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_123',
        }),
      ),
    ).toEqual(['secret environment variable GITHUB_PERSONAL_ACCESS_TOKEN is inlined: "ghp_123"']);
    const withDefault: RegistryPackage = { ...npm, packageArguments: [], environmentVariables: [{ name: 'KEY', isSecret: true, default: 'sk-live-default' }] };
    expect(problems({ package: withDefault }, 'cursor', desktop('npx', ['-y', '@acme/weather@1.2.0'], { KEY: 'sk-live-default' }))).toEqual(
      expect.arrayContaining(['secret text of the entry inlined: sk-live-default']),
    );
    const vs = JSON.stringify({
      inputs: [{ type: 'promptString', id: 'key', description: 'k' }],
      servers: { x: { type: 'http', url: 'https://eu.acme.dev/mcp', headers: { 'X-API-Key': '${input:key}' } } },
    });
    expect(problems({ remote }, 'vscode', vs)).toEqual(['VS Code input key for secret X-API-Key is not masked']);
  });

  test('VS Code: an input used but not declared, one declared but not used, a config of the wrong shape', () => {
    const vs = JSON.stringify({
      inputs: [{ type: 'promptString', id: 'unused', description: 'u' }],
      servers: { x: { type: 'http', url: 'https://eu.acme.dev/mcp', headers: { 'X-API-Key': '${input:key}' } } },
    });
    expect(problems({ remote }, 'vscode', vs)).toEqual(
      expect.arrayContaining(['${input:key} is not declared in inputs', 'input unused is declared but not used']),
    );
    expect(problems({ remote }, 'vscode', JSON.stringify({ mcpServers: { x: { url: 'https://eu.acme.dev/mcp' } } }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/does not match the vscode config format/)]),
    );
  });

  test('endpoints: another URL, a required header missing, the wrong transport', () => {
    expect(problems({ remote }, 'cursor', JSON.stringify({ mcpServers: { x: { url: 'https://other.dev/mcp', headers: { 'X-API-Key': '<KEY>' } } } }))).toEqual([
      "URL https://other.dev/mcp is not the entry's https://{tenant}.acme.dev/mcp",
    ]);
    expect(problems({ remote }, 'claude-code', 'claude mcp add --transport sse x https://eu.acme.dev/mcp')).toEqual([
      "transport sse, the entry's is streamable-http",
      'header X-API-Key missing',
    ]);
  });
});

const REAL_ROWS = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'install-clients', 'registry-rows.json'), 'utf8')) as unknown[];

function checkAll(rows: unknown[]): { records: number; latest: number; snippets: number; problems: string[] } {
  const records = sampleRecords(rows);
  let snippets = 0;
  const found: string[] = [];
  for (const { record } of records) {
    const options = installOptions(record);
    snippets += options.reduce((n, o) => n + o.snippets.length, 0);
    found.push(...checkRecord(record, options));
  }
  return { records: records.length, latest: records.filter((r) => r.latest).length, snippets, problems: found };
}

test('every snippet of the committed real rows passes the checker', () => {
  const r = checkAll(REAL_ROWS);
  expect(r.latest).toBe(REAL_ROWS.length);
  expect(r.snippets).toBeGreaterThan(100);
  expect(r.problems).toEqual([]);
});

const sample = loadSampleRows();
if (!sample)
  console.log('install-snippets: ../shared/reference/registry/samples not found; skipping the full-sample check (the committed rows above still ran)');
const testSample = sample ? test : test.skip;

testSample('every snippet of every server of the real registry sample passes the checker (675 latest, older versions too)', () => {
  const r = checkAll(sample ?? []);
  expect(r.latest).toBe(675);
  expect(r.records).toBe(1289);
  expect(r.snippets).toBeGreaterThan(5000);
  expect(r.problems).toEqual([]);
});
