import type { HttpEvent, HttpResult, LambdaContext } from '../shared/http/types';

/**
 * Lambda response streaming for the `/v1` pipeline (the git remote's function URL): the pipeline's
 * answer goes out through the runtime's response stream, a megabyte at a time, instead of as the
 * buffered result a function returns. A buffered Lambda answer is at most 6 MB (4.5 MB of binary
 * once base64-encoded); a streamed one up to 200 MB, which is what a clone of a large memory needs.
 * The runtime's `awslambda` global is passed in, so this is tested without Lambda.
 */
export interface ResponseStream {
  write(chunk: Uint8Array): boolean;
  end(): void;
  once(event: 'drain' | 'finish' | 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface StreamingRuntime {
  streamifyResponse(handler: (event: HttpEvent, stream: ResponseStream, context: LambdaContext) => Promise<void>): unknown;
  HttpResponseStream: { from(stream: ResponseStream, prelude: { statusCode: number; headers: Record<string, string>; cookies?: string[] }): ResponseStream };
}

const CHUNK = 1024 * 1024;

export function streamingEntry(handle: (event: HttpEvent, context: LambdaContext) => Promise<HttpResult>, runtime?: StreamingRuntime): unknown {
  const rt = runtime ?? (globalThis as { awslambda?: StreamingRuntime }).awslambda;
  if (typeof rt?.streamifyResponse !== 'function') throw new Error('response streaming needs the Lambda Node.js runtime (its awslambda global)');
  return rt.streamifyResponse(async (event, stream, context) => {
    const result = await handle(event, context);
    const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    const { 'content-length': _length, ...headers } = result.headers;
    const out = rt.HttpResponseStream.from(stream, { statusCode: result.statusCode, headers, ...(result.cookies?.length && { cookies: result.cookies }) });
    const done = new Promise<void>((resolve, reject) => {
      out.once('finish', () => resolve());
      out.once('error', (err) => reject(err));
    });
    for (let i = 0; i < body.length; i += CHUNK) {
      if (!out.write(body.subarray(i, i + CHUNK))) await new Promise((r) => out.once('drain', r));
    }
    out.end();
    await done;
  });
}
