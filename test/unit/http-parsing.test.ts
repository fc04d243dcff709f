import { z } from 'zod';
import { parseRawQuery, validateQuery, ValidationError } from '../../lambdas/shared/http/query';
import { RouteMatcher } from '../../lambdas/shared/http/route-table';
import { CATALOG_API } from '../../lambdas/catalog/routes';

describe('parseRawQuery', () => {
  it('keeps repeats in order, decodes once, and treats + as space', () => {
    const q = parseRawQuery('type=npm&type=pypi&q=a+b%2Bc&empty=&flag&bad=%E0%A4%A');
    expect(q.get('type')).toEqual(['npm', 'pypi']);
    expect(q.get('q')).toEqual(['a b+c']);
    expect(q.get('empty')).toEqual(['']);
    expect(q.get('flag')).toEqual(['']);
    expect(q.get('bad')).toEqual(['%E0%A4%A']);
    expect(parseRawQuery(undefined).size).toBe(0);
  });
});

describe('validateQuery', () => {
  const schema = z.object({ one: z.string().optional(), many: z.array(z.enum(['a', 'b'])).optional() });
  const shape = { multi: ['many'] };

  it('splits multi-valued keys on commas and repeats alike, and ignores unknown keys', () => {
    expect(validateQuery(schema, shape, parseRawQuery('many=a,b&many=a&other=1&other=2'))).toEqual({ many: ['a', 'b', 'a'] });
  });

  it('refuses a single-valued key given twice, naming it', () => {
    try {
      validateQuery(schema, shape, parseRawQuery('one=x&one=y'));
      throw new Error('expected a 400');
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).status).toBe(400);
      expect((err as ValidationError).details).toEqual([{ field: 'one', message: 'must be given at most once' }]);
    }
  });
});

describe('RouteMatcher', () => {
  const m = new RouteMatcher(CATALOG_API.routes);

  it('matches templates, decodes path parameters once, and reports allowed methods', () => {
    expect(m.match('GET', '/api/mcps/io.github.x%2Fy').match?.pathParameters).toEqual({ slug: 'io.github.x/y' });
    expect(m.match('GET', '/api/mcps/%2541').match?.pathParameters).toEqual({ slug: '%41' });
    expect(m.match('POST', '/api/mcps')).toEqual({ match: undefined, allowed: ['GET'] });
    expect(m.match('GET', '/api/nope')).toEqual({ match: undefined, allowed: [] });
    expect(m.match('GET', '/api/mcps/a/b').allowed).toEqual([]);
  });

  it('supports greedy parameters', () => {
    const g = new RouteMatcher([{ method: 'GET', path: '/v1/memories/{memory}/notes/{path+}', fn: 'm', operationId: 'getNote' }]);
    expect(g.match('GET', '/v1/memories/m/notes/a/b%2Fc.md').match?.pathParameters).toEqual({ memory: 'm', path: 'a/b/c.md' });
  });
});
