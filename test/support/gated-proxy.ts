import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP proxy in front of a backend (DynamoDB Local) that can withhold answers: armed with a
 * predicate, the first request that matches is sent on, takes effect, and its answer is kept from
 * the client, which waits for it forever; so is every answer after it (the SDK's retries, a read
 * that would tell the client what happened), until the next `arm`. `landed` settles with the
 * backend's answer once the request took effect: the moment a test kills the instance that sent it
 * (a crash between its commit and its answer). Before the match everything passes through.
 */
export interface GatedProxy {
  url: string;
  /** Withholds the answer of the next request whose `X-Amz-Target` and body match, and every answer after it, until the next `arm`. */
  arm(match: (target: string, body: string) => boolean): { landed: Promise<{ status: number; body: string }> };
  /** Lets everything pass again (the answers withheld so far stay withheld). */
  disarm(): void;
  close(): Promise<void>;
}

export async function startGatedProxy(upstream: string): Promise<GatedProxy> {
  const to = new URL(upstream);
  let armed: { match: (target: string, body: string) => boolean; resolve: (v: { status: number; body: string }) => void } | undefined;
  let holding = false;
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();

  const forward = (
    req: IncomingMessage,
    body: Buffer,
    onAnswer: (status: number, headers: IncomingMessage['headers'], answer: Buffer) => void,
    fail: () => void,
  ) => {
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => onAnswer(up.statusCode ?? 502, up.headers, Buffer.concat(chunks)));
      up.on('error', fail);
    });
    out.on('error', fail);
    out.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers['x-amz-target'] ?? '');
      const gate = !holding && armed?.match(target, body.toString('utf8')) ? armed : undefined;
      const hold = holding || gate !== undefined;
      if (gate) holding = true;
      forward(
        req,
        body,
        (status, headers, answer) => {
          if (hold) {
            held.push(res);
            gate?.resolve({ status, body: answer.toString('utf8') });
            return;
          }
          res.writeHead(status, headers);
          res.end(answer);
        },
        () => res.destroy(),
      );
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arm(match) {
      holding = false;
      const landed = new Promise<{ status: number; body: string }>((resolve) => {
        armed = { match, resolve };
      });
      return { landed };
    },
    disarm() {
      armed = undefined;
      holding = false;
    },
    async close() {
      for (const r of held) r.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
