import { ResponseCache } from '../../lambdas/catalog/response-cache';
import { loadCatalogConfig } from '../../lambdas/catalog/config';
import { ENCODED_BODY, type HttpResult } from '../../lambdas/shared/http/types';

const page = (chars: number, tag = 'x'): HttpResult => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: tag.repeat(chars) });

describe('ResponseCache', () => {
  const gen = {};

  it('answers a copy for the same generation only, and drops an entry of an older one', () => {
    const c = new ResponseCache();
    const set = page(10);
    c.set('k', gen, set);
    set.headers['x-late'] = 'changed after it was kept';
    const hit = c.get('k', gen);
    expect(hit?.body).toBe('x'.repeat(10));
    if (hit) hit.statusCode = 500;
    // The headers every copy shares cannot be changed through one of them (the pipeline answers with new ones).
    expect(() => {
      if (hit) hit.headers['x-ratelimit-remaining'] = '1';
    }).toThrow(TypeError);
    expect(c.get('k', gen)).toMatchObject({ statusCode: 200, headers: { 'content-type': 'application/json' } });
    expect(c.get('k', gen)?.headers).toEqual({ 'content-type': 'application/json' });
    expect(c.get('k', {})).toBeUndefined();
    expect(c.size.entries).toBe(0);
    expect(c.size.bytes).toBe(0);
  });

  it('never keeps more than its entries, least recently used out first', () => {
    const c = new ResponseCache(3);
    for (const k of ['a', 'b', 'c']) c.set(k, gen, page(1, k));
    c.get('a', gen);
    c.set('d', gen, page(1, 'd'));
    expect(c.get('b', gen)).toBeUndefined();
    expect(['a', 'c', 'd'].map((k) => c.get(k, gen)?.body)).toEqual(['a', 'c', 'd']);
    expect(c.size.entries).toBe(3);
  });

  it('never holds more than its bytes: large pages push out old ones, one larger than the cap is not kept', () => {
    const cap = 100_000;
    const c = new ResponseCache(1000, cap);
    for (let i = 0; i < 20; i++) {
      c.set(`p${i}`, gen, page(10_000));
      expect(c.size.bytes).toBeLessThanOrEqual(cap);
    }
    expect(c.size.entries).toBe(9);
    expect(c.get('p19', gen)).toBeDefined();
    expect(c.get('p0', gen)).toBeUndefined();
    c.set('huge', gen, page(120_000));
    expect(c.get('huge', gen)).toBeUndefined();
    expect(c.size.bytes).toBeLessThanOrEqual(cap);
  });

  it('replacing a key keeps the byte count exact; errors are never kept', () => {
    const c = new ResponseCache();
    c.set('k', gen, page(1000));
    const one = c.size.bytes;
    c.set('k', gen, page(1000));
    expect(c.size).toEqual({ entries: 1, bytes: one });
    c.set('e', gen, { statusCode: 400, headers: {}, body: '{}' });
    expect(c.get('e', gen)).toBeUndefined();
  });

  it("the copies of a hit share one holder for the encoded body, which Lambda's JSON never shows", () => {
    const c = new ResponseCache();
    c.set('k', gen, page(100));
    const first = c.get('k', gen);
    const second = c.get('k', gen);
    expect(first?.[ENCODED_BODY]).toBeDefined();
    expect(second?.[ENCODED_BODY]).toBe(first?.[ENCODED_BODY]);
    const holder = first?.[ENCODED_BODY];
    if (holder) holder.bytes = Buffer.from(first?.body ?? '');
    expect(c.get('k', gen)?.[ENCODED_BODY]?.bytes?.toString()).toBe('x'.repeat(100));
    expect(JSON.parse(JSON.stringify(second))).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: 'x'.repeat(100) });
    // A new entry for the key (a new generation's page) starts with an empty holder.
    c.set('k', gen, page(5));
    expect(c.get('k', gen)?.[ENCODED_BODY]?.bytes).toBeUndefined();
  });

  it('counts what V8 holds: a Latin-1 page at one byte per character, any other at two', () => {
    const c = new ResponseCache();
    c.set('a', gen, page(10_000));
    const latin1 = c.size.bytes;
    c.set('b', gen, page(10_000, 'é'));
    expect(c.size.bytes - latin1).toBe(latin1 - 'a'.length + 'b'.length);
    c.set('c', gen, page(10_000, '→'));
    expect(c.size.bytes - 2 * latin1).toBeGreaterThanOrEqual(20_000);
  });

  it('holds 1,200 list pages of 17 KB in 32 MB (at two bytes a character it held 960, and a round over 1,200 missed every time)', () => {
    const c = new ResponseCache(50_000, 32 * 2 ** 20);
    const round = () => {
      let hits = 0;
      for (let i = 0; i < 1200; i++) {
        if (c.get(`/api/mcps?page=${i}`, gen)) hits++;
        else c.set(`/api/mcps?page=${i}`, gen, page(17_000));
      }
      return hits;
    };
    round();
    expect(round()).toBe(1200);
  });

  it("counts a writer's encoded copy once it is there, and keeps within its bytes with it", () => {
    const cap = 100_000;
    const c = new ResponseCache(1000, cap);
    for (let i = 0; i < 8; i++) c.set(`p${i}`, gen, page(10_000));
    const before = c.size.bytes;
    for (let i = 0; i < 8; i++) {
      const hit = c.get(`p${i}`, gen);
      const holder = hit?.[ENCODED_BODY];
      if (holder && hit) holder.bytes ??= Buffer.from(hit.body ?? '');
    }
    expect(c.size.bytes).toBe(before);
    for (let i = 0; i < 8; i++) c.get(`p${i}`, gen);
    // Every entry left counts its string and its 10,000 encoded bytes; older ones went to make room.
    expect(c.size.bytes).toBe(c.size.entries * (before / 8 + 10_000));
    expect(c.size.bytes).toBeLessThanOrEqual(cap);
    expect(c.size.entries).toBeLessThan(8);
  });
});

describe('response cache sizing', () => {
  const load = (env: Record<string, string>) => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return loadCatalogConfig();
    } finally {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    }
  };

  it("takes a quarter of the function's memory by default, and the variables when set", () => {
    expect(load({}).responseCacheMb).toBe(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ? Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE) / 4 : 256);
    expect(load({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048' }).responseCacheMb).toBe(512);
    expect(load({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048', RESPONSE_CACHE_MB: '40' }).responseCacheMb).toBe(40);
    expect(load({}).responseCacheEntries).toBe(50_000);
  });
});
