import { ResponseCache } from '../../lambdas/catalog/response-cache';
import { ENCODED_BODY, type HttpResult } from '../../lambdas/shared/http/types';

const page = (chars: number, tag = 'x'): HttpResult => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: tag.repeat(chars) });

describe('ResponseCache', () => {
  const gen = {};

  it('answers a copy for the same generation only, and drops an entry of an older one', () => {
    const c = new ResponseCache();
    c.set('k', gen, page(10));
    const hit = c.get('k', gen);
    expect(hit?.body).toBe('x'.repeat(10));
    if (hit) hit.headers['x-ratelimit-remaining'] = '1';
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
    expect(c.size.entries).toBe(4);
    expect(c.get('p19', gen)).toBeDefined();
    expect(c.get('p0', gen)).toBeUndefined();
    c.set('huge', gen, page(60_000));
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
});
