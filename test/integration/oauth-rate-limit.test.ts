import type { LocalStack } from '../../bin/local-stack/stack';
import { startScratchStack, type ScratchStack } from '../support/scratch-stack';

/**
 * The OAuth front's per-IP limits at their defaults (10 registrations, 60 token or revocation
 * requests per minute), through the shared DynamoDB limiter on the local stack: the request past the
 * budget is 429 in OAuth's error JSON with Retry-After (no client id).
 */
let scratch: ScratchStack | undefined;
let stack: LocalStack;

beforeAll(async () => {
  scratch = await startScratchStack('oauth-rate');
  stack = scratch.stack;
}, 120_000);

afterAll(async () => {
  await scratch?.close();
});

const register = (name: string) =>
  fetch(`${stack.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1:9/cb'] }),
  });

const revoke = () =>
  fetch(`${stack.url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: 'mcpat_not-a-real-token' }).toString(),
  });

/**
 * Sends `send()` until the first 429 (at most `cap` times). Counts only, no timing assertion: the
 * bucket refills at `perMinute` a minute while the loop runs, so a slow machine may see a few more
 * pass than the burst, never fewer; the bound allows for what can have refilled meanwhile.
 */
async function untilLimited(send: () => Promise<Response>, perMinute: number, cap: number): Promise<{ allowed: number; denied: Response }> {
  const started = Date.now();
  let allowed = 0;
  for (let i = 0; i < cap; i++) {
    const res = await send();
    if (res.status === 429) {
      const refilled = Math.ceil(((Date.now() - started) / 60_000) * perMinute);
      expect(allowed).toBeGreaterThanOrEqual(perMinute);
      expect(allowed).toBeLessThanOrEqual(perMinute + refilled);
      return { allowed, denied: res };
    }
    expect(res.status).toBeLessThan(300);
    await res.arrayBuffer();
    allowed++;
  }
  throw new Error(`never limited after ${cap} requests`);
}

it('allows 10 registrations a minute per IP, then answers 429 with Retry-After and no client id', async () => {
  let n = 0;
  const { denied } = await untilLimited(() => register(`client ${n++}`), 10, 40);
  expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(denied.headers.get('access-control-allow-origin')).toBe('*');
  expect(await denied.json()).toEqual({ error: 'rate_limited', error_description: expect.stringMatching(/retry/i) });
});

it('gives the token and revocation endpoints their own budget of 60 a minute', async () => {
  // The registrations above spent nothing of it.
  const { denied } = await untilLimited(revoke, 60, 200);
  expect(denied.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  // Metadata is never limited.
  expect((await fetch(`${stack.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
});
