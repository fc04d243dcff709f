import { logger } from '../shared/logger';
import { type ByteSink, SinkClosedError, writeBody } from '../shared/http/stream-body';
import { type HttpEvent, type HttpResult, type LambdaContext, STREAM_BODY } from '../shared/http/types';

/**
 * Lambda response streaming for the `/v1` pipeline (the git remote's function URL): the pipeline's
 * answer goes out through the runtime's response stream instead of as the buffered result a function
 * returns. A buffered Lambda answer is at most 6 MB (4.5 MB of binary once base64-encoded); a
 * streamed one up to 200 MB, which is what a clone or an export of a large memory needs. A body the
 * pipeline made whole is sent a megabyte at a time; an export's body (`STREAM_BODY`) is made while it
 * is sent, each chunk asked for once the stream took the last. The runtime's `awslambda` global is
 * passed in, so this is tested without Lambda.
 */
export interface ResponseStream extends ByteSink {
  end(): void;
  once(event: 'drain' | 'finish' | 'close' | 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface StreamingRuntime {
  streamifyResponse(handler: (event: HttpEvent, stream: ResponseStream, context: LambdaContext) => Promise<void>): unknown;
  HttpResponseStream: { from(stream: ResponseStream, prelude: { statusCode: number; headers: Record<string, string>; cookies?: string[] }): ResponseStream };
}

const CHUNK = 1024 * 1024;

function* slices(body: Buffer): Generator<Uint8Array> {
  for (let i = 0; i < body.length; i += CHUNK) yield body.subarray(i, i + CHUNK);
}

export function streamingEntry(handle: (event: HttpEvent, context: LambdaContext) => Promise<HttpResult>, runtime?: StreamingRuntime): unknown {
  const rt = runtime ?? (globalThis as { awslambda?: StreamingRuntime }).awslambda;
  if (typeof rt?.streamifyResponse !== 'function') throw new Error('response streaming needs the Lambda Node.js runtime (its awslambda global)');
  return rt.streamifyResponse(async (event, stream, context) => {
    const result = await handle(event, context);
    const body =
      result[STREAM_BODY] ??
      toAsync(slices(result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8')));
    const { 'content-length': _length, ...headers } = result.headers;
    const out = rt.HttpResponseStream.from(stream, { statusCode: result.statusCode, headers, ...(result.cookies?.length && { cookies: result.cookies }) });
    const done = new Promise<void>((resolve, reject) => {
      out.once('finish', () => resolve());
      out.once('error', (err) => reject(err));
    });
    done.catch(() => undefined);
    try {
      await writeBody(body, out);
    } catch (err) {
      // The status and headers are gone: all that is left is to cut the body short (the reader's
      // git or unzip then refuses the truncated file) and say why in the log.
      if (err instanceof SinkClosedError) logger.info('the reader left before the streamed answer ended');
      else logger.error('streamed answer cut short', { err: err instanceof Error ? err.message : String(err) });
      throw err;
    }
    out.end();
    await done;
  });
}

async function* toAsync(chunks: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* chunks;
}
