import type { CloudFrontHeaders, CloudFrontResponseEvent } from 'aws-lambda';
import { handler, ICON_NOT_FOUND_BODY } from '../../lambdas/edge/icon-not-found';

function originResponse(status: string, headers: CloudFrontHeaders): CloudFrontResponseEvent {
  return {
    Records: [
      {
        cf: {
          config: {
            distributionDomainName: 'd111111abcdef8.cloudfront.net',
            distributionId: 'EDFDVBD6EXAMPLE',
            eventType: 'origin-response',
            requestId: '4TyzHTaYWb1GX1qTfsHhEqV6HUDd_BzoBZnwfnvQc_1oF26ClkoUSEQ==',
          },
          request: {
            clientIp: '203.0.113.178',
            headers: { host: [{ key: 'Host', value: 'icons.s3.amazonaws.com' }] },
            method: 'GET',
            querystring: '',
            uri: '/api/icons/io.github.someone-server',
          },
          response: { status, statusDescription: status === '200' ? 'OK' : 'Forbidden', headers },
        },
      },
    ],
  };
}

const s3ErrorHeaders: CloudFrontHeaders = {
  'content-type': [{ key: 'Content-Type', value: 'application/xml' }],
  'content-length': [{ key: 'Content-Length', value: '243' }],
  'x-amz-request-id': [{ key: 'x-amz-request-id', value: 'ABC123' }],
  'x-amz-id-2': [{ key: 'x-amz-id-2', value: 'xyz' }],
  server: [{ key: 'Server', value: 'AmazonS3' }],
  date: [{ key: 'Date', value: 'Sat, 22 Nov 2026 05:00:00 GMT' }],
  via: [{ key: 'Via', value: '1.1 abc.cloudfront.net (CloudFront)' }],
  'transfer-encoding': [{ key: 'Transfer-Encoding', value: 'chunked' }],
};

describe('icon-not-found (Lambda@Edge origin-response)', () => {
  it.each(['403', '404'])('turns an S3 %s into the catalog 404 envelope', async (status) => {
    const out = await handler(originResponse(status, { ...s3ErrorHeaders }));
    expect(out.status).toBe('404');
    expect(out.statusDescription).toBe('Not Found');
    expect(out.bodyEncoding).toBe('text');
    expect(JSON.parse(out.body ?? '')).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: 'No icon for this slug' },
    });
    expect(out.body).toBe('{"success":false,"error":{"code":"NOT_FOUND","message":"No icon for this slug"}}');
    expect(out.headers?.['content-type']).toEqual([{ key: 'Content-Type', value: 'application/json' }]);
    expect(out.headers?.['cache-control']).toEqual([{ key: 'Cache-Control', value: 'no-store' }]);
  });

  it("drops S3's entity headers and keeps CloudFront's read-only ones", async () => {
    const out = await handler(originResponse('403', { ...s3ErrorHeaders }));
    const names = Object.keys(out.headers ?? {});
    expect(names).not.toEqual(expect.arrayContaining(['content-length']));
    expect(names.some((n) => n.startsWith('x-amz-'))).toBe(false);
    expect(out.headers?.via).toEqual(s3ErrorHeaders.via);
    expect(out.headers?.['transfer-encoding']).toEqual(s3ErrorHeaders['transfer-encoding']);
    expect(out.headers?.server).toEqual(s3ErrorHeaders.server);
    // Every header is listed under its lower-case name, as CloudFront requires.
    for (const name of names) expect(name).toBe(name.toLowerCase());
  });

  it('passes an icon through untouched', async () => {
    const headers: CloudFrontHeaders = {
      'content-type': [{ key: 'Content-Type', value: 'image/webp' }],
      'cache-control': [{ key: 'Cache-Control', value: 'public, max-age=31536000, immutable' }],
      etag: [{ key: 'ETag', value: '"abc"' }],
    };
    const event = originResponse('200', headers);
    const out = await handler(event);
    expect(out).toBe(event.Records[0].cf.response);
    expect(out.status).toBe('200');
    expect(out.body).toBeUndefined();
  });

  it.each(['304', '500', '503'])('leaves a %s alone', async (status) => {
    const event = originResponse(status, { ...s3ErrorHeaders });
    expect(await handler(event)).toBe(event.Records[0].cf.response);
  });

  it('exports the exact body it sends', () => {
    expect(ICON_NOT_FOUND_BODY).toBe('{"success":false,"error":{"code":"NOT_FOUND","message":"No icon for this slug"}}');
  });
});
