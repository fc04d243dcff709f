import type { z } from 'zod';
import type { LocalStack } from '../../bin/local-stack/stack';
import { ErrorSchema } from '../../lambdas/memory-api/response-schemas';
import { testIssuer, type TestIssuer } from '../support/auth-jwks';
import { startScratchStack } from '../support/scratch-stack';

/**
 * The whole local stack (`npm start`'s code: its own DynamoDB Local and S3 server on a temporary
 * DATA_DIR, port 0, no demo data) for the `/v1` tests, with helpers to mint tokens and call it over
 * real HTTP. `env` is applied while the stack starts (e.g. a raised MEMORY_RATE_LIMIT).
 */
export interface MemoryStack {
  stack: LocalStack;
  url: string;
  dataDir: string;
  /** The stack's own signing key, for forging tokens the verifier must refuse. */
  forger: TestIssuer;
  token(sub: string, o?: { scope?: string; memories?: string[]; ttlSeconds?: number; audience?: string; issuedAt?: number }): string;
  bearer(sub: string, o?: Parameters<MemoryStack['token']>[1]): Record<string, string>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startMemoryStack(
  env: Record<string, string> = {},
  opts: Pick<Parameters<typeof startScratchStack>[2] & object, 'clock' | 'attachTo'> = {},
): Promise<MemoryStack> {
  const scratch = await startScratchStack('memory-api', env, { host: '127.0.0.1', ...opts });
  const { stack, dataDir } = scratch;
  const token: MemoryStack['token'] = (sub, o = {}) =>
    stack.issuer.signAccessToken({
      sub,
      scope: o.scope ?? 'memory:read memory:write',
      memories: o.memories,
      ttlSeconds: o.ttlSeconds ?? 600,
      audience: o.audience ?? stack.auth.audience,
      issuedAt: o.issuedAt,
    });
  return {
    stack,
    url: stack.url,
    dataDir,
    forger: testIssuer(stack.issuer.issuer, dataDir),
    token,
    bearer: (sub, o) => ({ authorization: `Bearer ${token(sub, o)}` }),
    fetch: (path, init) => fetch(`${stack.url}${path}`, { redirect: 'manual', ...init }),
    close: () => scratch.close(),
  };
}

/** Parses a JSON response and checks it against a frozen `/v1` schema (a mismatch fails the test). */
export async function body<S extends z.ZodType>(res: Response, schema: S): Promise<z.output<S>> {
  const text = await res.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`response ${res.status} does not match its schema: ${parsed.error.message}\n${text.slice(0, 500)}`);
  return parsed.data;
}

/** The error code of a response, after checking it has the `/v1` envelope. */
export async function errorCode(res: Response): Promise<string> {
  return (await body(res, ErrorSchema)).error.code;
}
