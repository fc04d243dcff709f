/**
 * The viewer-request CloudFront Function of the API behaviours. CloudFront runs the file as plain
 * JavaScript (no module system), so the test evaluates its text the same way and takes `handler`.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

interface CfValue {
  value: string;
  multiValue?: CfValue[];
}
interface CfRequest {
  method: string;
  uri: string;
  querystring: Record<string, CfValue>;
  headers: Record<string, CfValue>;
  cookies: Record<string, CfValue>;
}
interface CfEvent {
  version: '1.0';
  context: { distributionDomainName: string; distributionId: string; eventType: 'viewer-request'; requestId: string };
  viewer: { ip: string };
  request: CfRequest;
}

const SOURCE = readFileSync(path.join(__dirname, '..', '..', 'lambdas', 'edge', 'viewer-address.js'), 'utf8');
const handler = new Function(`${SOURCE}\nreturn handler;`)() as (event: CfEvent) => CfRequest;

function viewerRequest(ip: string, headers: Record<string, CfValue>): CfEvent {
  return {
    version: '1.0',
    context: {
      distributionDomainName: 'd111111abcdef8.cloudfront.net',
      distributionId: 'EDFDVBD6EXAMPLE',
      eventType: 'viewer-request',
      requestId: '4TyzHTaYWb1GX1qTfsHhEqV6HUDd_BzoBZnwfnvQc_1oF26ClkoUSEQ==',
    },
    viewer: { ip },
    request: {
      method: 'GET',
      uri: '/api/servers',
      querystring: { limit: { value: '10' } },
      headers,
      cookies: { session: { value: 'abc' } },
    },
  };
}

describe('viewer-address CloudFront Function', () => {
  it('is plain JavaScript with a top-level handler and no module syntax', () => {
    expect(SOURCE).toMatch(/^function handler\(event\) \{$/m);
    expect(SOURCE).not.toMatch(/\b(require|import|export|module\.exports)\b/);
    expect(typeof handler).toBe('function');
  });

  it('overwrites a spoofed x-viewer-address with the viewer IP and keeps everything else', () => {
    const event = viewerRequest('203.0.113.7', {
      host: { value: 'd111111abcdef8.cloudfront.net' },
      authorization: { value: 'Bearer token' },
      'user-agent': { value: 'curl/8.5.0' },
      'x-viewer-address': { value: '1.1.1.1', multiValue: [{ value: '1.1.1.1' }, { value: '8.8.8.8' }] },
    });
    const request = handler(event);
    expect(request.headers).toEqual({
      host: { value: 'd111111abcdef8.cloudfront.net' },
      authorization: { value: 'Bearer token' },
      'user-agent': { value: 'curl/8.5.0' },
      'x-viewer-address': { value: '203.0.113.7' },
    });
    expect(request).toMatchObject({ method: 'GET', uri: '/api/servers', querystring: { limit: { value: '10' } }, cookies: { session: { value: 'abc' } } });
  });

  it('adds the header when the client sent none, IPv6 included', () => {
    const request = handler(viewerRequest('2001:db8::1', { host: { value: 'd111111abcdef8.cloudfront.net' } }));
    expect(request.headers['x-viewer-address']).toEqual({ value: '2001:db8::1' });
    expect(request.headers.host).toEqual({ value: 'd111111abcdef8.cloudfront.net' });
  });
});
