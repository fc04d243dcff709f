import { makeRecord, type Entry } from '../support/records';
import { startOrgStack, type OrgStack } from '../support/org-harness';
import { registryResponseValidator, serverJsonValidator, serverListValidator } from '../support/registry-schemas';

/**
 * The organisation registry against the official registry's OpenAPI (the copies in
 * test/fixtures/registry): every route, allowed, blocked and pinned servers, unknown names as the
 * registry's 404, CORS preflights; and the admin API that writes the allow-list.
 */
type Json = Record<string, unknown>;
type List = {
  servers: Array<{ server: Json & { name: string; version: string }; _meta: Record<string, Json> }>;
  metadata: { count: number; nextCursor?: string };
};

const FILLERS = Array.from({ length: 150 }, (_, i) => makeRecord(`filler-${i}`, { name: `org.filler/s-${String(i).padStart(3, '0')}` }));
const LATE = ['a', 'b', 'c', 'd', 'e'].map((s) => makeRecord(`late-${s}`, { name: `zz.late/${s}` }));
const RECORDS = [
  makeRecord('weather', {
    name: 'io.github.acme/weather',
    version: '2.0.0',
    packages: [
      { registryType: 'npm', identifier: '@acme/weather', version: '2.0.0', transport: { type: 'stdio' } },
      { registryType: 'oci', identifier: 'docker.io/acme/weather-helper', version: '0.9.0', transport: { type: 'stdio' } },
    ],
  }),
  makeRecord('maps', { name: 'io.github.acme/maps' }),
  makeRecord('legacy', { name: 'io.github.acme/legacy-tool' }),
  makeRecord('notes', { name: 'com.example/notes' }),
  makeRecord('secret', { name: 'com.example/secret' }),
  ...FILLERS,
  ...LATE,
];
const ALLOWED = ['com.example/notes', 'io.github.acme/maps', 'io.github.acme/weather', ...LATE.map((r) => r.name)];

const ALLOW_LIST = `# the organisation's servers
allow:
  - io.github.acme/*
  - name: io.github.acme/weather
    version: 1.4.2
  - com.example/notes
  - zz.late/*
block:
  - io.github.acme/legacy-*
`;

let org: OrgStack;
let admin: string;

const enc = encodeURIComponent;
const get = async (path: string) => {
  const res = await org.fetch(path);
  return { res, body: (await res.json()) as Json };
};
const put = (text: string, headers: Record<string, string>) =>
  org.fetch('/org/admin/allow-list', { method: 'PUT', headers: { 'content-type': 'application/yaml', authorization: admin, ...headers }, body: text });

beforeAll(async () => {
  org = await startOrgStack(RECORDS.map((record): Entry => ({ record })));
  admin = org.bearer('ops', ['catalog-admins']);
});
afterAll(() => org?.close());

describe('before an allow-list exists', () => {
  it('serves an empty registry and the 404 of every name', async () => {
    const { res, body } = await get('/org/v0.1/servers');
    expect(res.status).toBe(200);
    expect(body).toEqual({ servers: [], metadata: { count: 0 } });
    const one = await get(`/org/v0.1/servers/${enc('com.example/notes')}/versions/latest`);
    expect(one.res.status).toBe(404);
    expect(one.body).toEqual({ error: 'Server not found' });
    expect((await get('/org/admin/allow-list').then(() => org.fetch('/org/admin/allow-list', { headers: { authorization: admin } }))).status).toBe(404);
  });
});

describe('the admin API', () => {
  it('is for verified members of catalog-admins only', async () => {
    const anonymous = await org.fetch('/org/admin/allow-list');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    const forged = await org.fetch('/org/admin/allow-list', { headers: { authorization: 'Bearer not.a.token' } });
    expect(forged.status).toBe(401);
    const member = await org.fetch('/org/admin/allow-list', { headers: { authorization: org.bearer('dev', ['developers']) } });
    expect(member.status).toBe(403);
    expect(((await member.json()) as Json).error).toMatch(/catalog-admins/);
    const write = await put(ALLOW_LIST, { authorization: org.bearer('dev'), 'if-none-match': '*' });
    expect(write.status).toBe(403);
  });

  it('refuses a replace without a condition (428), a foreign type (415), an invalid list (400, nothing written)', async () => {
    expect((await put(ALLOW_LIST, {})).status).toBe(428);
    expect((await put(ALLOW_LIST, { 'if-none-match': '*', 'content-type': 'text/plain' })).status).toBe(415);
    const bad = await put('allow:\n  - "bad name!"\n  - name: io.x/*\n    version: "^1.0.0"\nextra: 1\n', { 'if-none-match': '*' });
    expect(bad.status).toBe(400);
    const details = ((await bad.json()) as { details: Array<{ field: string }> }).details.map((d) => d.field);
    expect(details).toEqual(expect.arrayContaining(['allow.0', 'allow.1.version', '(file)']));
    expect((await put('{ not: [json', { 'if-none-match': '*', 'content-type': 'application/json' })).status).toBe(400);
    expect((await org.fetch('/org/admin/allow-list', { headers: { authorization: admin } })).status).toBe(404);
  });

  it('creates the file with If-None-Match: *, serves it byte for byte with its ETag, and refuses a stale If-Match (412)', async () => {
    const created = await put(ALLOW_LIST, { 'if-none-match': '*' });
    expect(created.status).toBe(200);
    const etag = created.headers.get('etag') as string;
    expect(await created.json()).toEqual({ etag, allow: 4, block: 1, pinned: 1 });
    expect((await put(ALLOW_LIST, { 'if-none-match': '*' })).status).toBe(412);

    const read = await org.fetch('/org/admin/allow-list', { headers: { authorization: admin } });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(etag);
    expect(read.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await read.text()).toBe(ALLOW_LIST);

    const edited = `${ALLOW_LIST}  - com.example/secret\n`;
    const again = await put(edited, { 'if-match': etag });
    expect(again.status).toBe(200);
    const stale = await put(ALLOW_LIST, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('etag')).toBe(again.headers.get('etag'));
    // Back to the list the registry tests below read.
    expect((await put(ALLOW_LIST, { 'if-match': again.headers.get('etag') as string })).status).toBe(200);
  });
});

describe('/org/v0.1 against the official OpenAPI', () => {
  const validList = serverListValidator();
  const validServer = serverJsonValidator();
  const validOne = registryResponseValidator('/v0.1/servers/{serverName}/versions/{version}', '200');
  const validVersions = registryResponseValidator('/v0.1/servers/{serverName}/versions', '200');
  const valid404 = registryResponseValidator('/v0.1/servers/{serverName}/versions/{version}', '404');

  async function walk(limit: number, query = ''): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const { res, body } = await get(`/org/v0.1/servers?limit=${limit}${query}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(validList(body) ? [] : validList.errors).toEqual([]);
      const page = body as unknown as List;
      expect(page.metadata.count).toBe(page.servers.length);
      for (const s of page.servers) expect(validServer(s.server) ? [] : [(s.server as Json).name, validServer.errors]).toEqual([]);
      names.push(...page.servers.map((s) => s.server.name));
      cursor = page.metadata.nextCursor;
    } while (cursor);
    return names;
  }

  it('lists only the allowed servers, in name order, on one page or many', async () => {
    expect(await walk(100)).toEqual(ALLOWED);
    expect(await walk(2)).toEqual(ALLOWED);
    expect(await walk(1, `&search=${enc('acme')}`)).toEqual(['io.github.acme/maps', 'io.github.acme/weather']);
  });

  it('serves a pinned server at its pin: server.version, the packages that track it, and the catalog meta', async () => {
    const { body } = await get(`/org/v0.1/servers?search=${enc('acme/weather')}`);
    const [entry] = (body as unknown as List).servers;
    expect(entry.server.version).toBe('1.4.2');
    expect(entry.server.packages).toEqual([
      expect.objectContaining({ identifier: '@acme/weather', version: '1.4.2' }),
      expect.objectContaining({ identifier: 'docker.io/acme/weather-helper', version: '0.9.0' }),
    ]);
    expect(entry._meta['io.example.catalog/v0']).toMatchObject({ slug: 'weather', pinnedVersion: '1.4.2', latestVersion: '2.0.0' });
    expect(entry._meta['io.modelcontextprotocol.registry/official']).toMatchObject({ status: 'active', isLatest: true });
  });

  it('answers versions/latest, versions/{pin} and versions with the pin, any other version as the 404', async () => {
    const name = enc('io.github.acme/weather');
    for (const v of ['latest', '1.4.2']) {
      const { res, body } = await get(`/org/v0.1/servers/${name}/versions/${v}`);
      expect(res.status).toBe(200);
      expect(validOne(body) ? [] : validOne.errors).toEqual([]);
      expect((body.server as Json).version).toBe('1.4.2');
    }
    const versions = await get(`/org/v0.1/servers/${name}/versions`);
    expect(validVersions(versions.body) ? [] : validVersions.errors).toEqual([]);
    expect((versions.body as unknown as List).servers.map((s) => s.server.version)).toEqual(['1.4.2']);
    const latestUpstream = await get(`/org/v0.1/servers/${name}/versions/2.0.0`);
    expect(latestUpstream.res.status).toBe(404);
    expect(valid404(latestUpstream.body)).toBe(true);
    // An unpinned server: latest and its own version.
    const maps = await get(`/org/v0.1/servers/${enc('io.github.acme/maps')}/versions/1.0.0`);
    expect(maps.res.status).toBe(200);
    expect(validOne(maps.body) ? [] : validOne.errors).toEqual([]);
  });

  it('answers blocked, not allowed and unknown names alike: the registry 404', async () => {
    for (const name of ['io.github.acme/legacy-tool', 'com.example/secret', 'org.filler/s-001', 'io.nowhere/none', 'x'.repeat(300)]) {
      for (const path of [`/org/v0.1/servers/${enc(name)}/versions`, `/org/v0.1/servers/${enc(name)}/versions/latest`]) {
        const { res, body } = await get(path);
        expect([path, res.status]).toEqual([path, 404]);
        expect(valid404(body)).toBe(true);
        expect(body).toEqual({ error: 'Server not found' });
      }
    }
  });

  it('refuses a bad limit or a foreign cursor with 400 in the registry error shape', async () => {
    const bad = await get('/org/v0.1/servers?limit=0');
    expect(bad.res.status).toBe(400);
    expect(bad.body).toMatchObject({ error: expect.any(String), details: [expect.objectContaining({ field: 'limit' })] });
    const publicCursor = (await get('/api/v0.1/servers?limit=1')).body.metadata as { nextCursor: string };
    expect((await get(`/org/v0.1/servers?cursor=${enc(publicCursor.nextCursor)}`)).res.status).toBe(400);
  });

  it('has the CORS headers IDEs need: open origin on answers and errors, preflights for GET (and PUT on the admin path)', async () => {
    for (const path of [
      '/org/v0.1/servers',
      `/org/v0.1/servers/${enc('com.example/notes')}/versions/latest`,
      `/org/v0.1/servers/${enc('io.nowhere/x')}/versions`,
    ]) {
      const res = await org.fetch(path, { headers: { origin: 'vscode-file://vscode-app' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const pre = await org.fetch(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://github.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    }
    const admin = await org.fetch('/org/admin/allow-list', {
      method: 'OPTIONS',
      headers: { origin: 'https://ops.example', 'access-control-request-method': 'PUT' },
    });
    expect(admin.headers.get('access-control-allow-methods')).toBe('GET, PUT, OPTIONS');
    expect(admin.headers.get('access-control-allow-headers')).toMatch(/If-Match/);
    expect((await org.fetch('/org/v0.1/servers', { method: 'POST' })).status).toBe(405);
  });
});

describe('/api/v0.1 version routes', () => {
  const validOne = registryResponseValidator('/v0.1/servers/{serverName}/versions/{version}', '200');
  const validVersions = registryResponseValidator('/v0.1/servers/{serverName}/versions', '200');

  it('serves any catalog server at latest and at its version, unfiltered, with errors in the envelope', async () => {
    const name = enc('io.github.acme/legacy-tool');
    for (const v of ['latest', '1.0.0']) {
      const { res, body } = await get(`/api/v0.1/servers/${name}/versions/${v}`);
      expect(res.status).toBe(200);
      expect(validOne(body) ? [] : validOne.errors).toEqual([]);
    }
    const weather = await get(`/api/v0.1/servers/${enc('io.github.acme/weather')}/versions/latest`);
    expect((weather.body.server as Json).version).toBe('2.0.0');
    const versions = await get(`/api/v0.1/servers/${name}/versions`);
    expect(validVersions(versions.body) ? [] : validVersions.errors).toEqual([]);
    const other = await get(`/api/v0.1/servers/${name}/versions/9.9.9`);
    expect(other.res.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND', message: 'Server version not found' } });
    expect((await get(`/api/v0.1/servers/${enc('io.nowhere/none')}/versions/latest`)).body).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
