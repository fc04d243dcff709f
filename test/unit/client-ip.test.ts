import { clientIp } from '../../lambdas/shared/http/client-ip';
import type { HttpEvent } from '../../lambdas/shared/http/types';

const event = (headers: Record<string, string>, sourceIp = '10.0.0.9') => ({ headers, requestContext: { http: { sourceIp } } }) as unknown as HttpEvent;

describe('client IP for rate limits', () => {
  it('trusts the viewer address only with the secret origin header', () => {
    expect(clientIp(event({ 'x-origin-verify': 's3cret', 'cloudfront-viewer-address': '203.0.113.7:51234' }), 's3cret')).toBe('203.0.113.7');
    expect(clientIp(event({ 'x-origin-verify': 's3cret', 'cloudfront-viewer-address': '2001:db8::1:443' }), 's3cret')).toBe('2001:db8::1');
    expect(clientIp(event({ 'x-origin-verify': 's3cret', 'x-viewer-address': '198.51.100.4' }), 's3cret')).toBe('198.51.100.4');
    // The function-set header wins over a CloudFront-Viewer-Address a client may have sent along.
    expect(clientIp(event({ 'x-origin-verify': 's3cret', 'x-viewer-address': '198.51.100.4', 'cloudfront-viewer-address': '6.6.6.6:1' }), 's3cret')).toBe(
      '198.51.100.4',
    );
  });

  it('ignores spoofed viewer headers without the secret, or when no secret is configured', () => {
    expect(clientIp(event({ 'cloudfront-viewer-address': '203.0.113.7:1' }), 's3cret')).toBe('10.0.0.9');
    expect(clientIp(event({ 'x-origin-verify': 'guess', 'x-viewer-address': '1.1.1.1' }), 's3cret')).toBe('10.0.0.9');
    expect(clientIp(event({ 'x-origin-verify': 's3cret', 'x-viewer-address': '1.1.1.1' }), undefined)).toBe('10.0.0.9');
  });
});
