import { isIP } from 'node:net';
import * as z from 'zod';
import type { ClientStore, OAuthClient } from './client-store';
import { readCappedBody } from '../shared/http/capped-body';
import type { OAuthFrontConfig } from './config';
import { privateAddress } from '../shared/private-address';
import { AddressRefusedError } from '../shared/http/pinned-fetch';
import { randomId } from './signed';

/** `fetch` as the front uses it (Client ID Metadata Documents, Cognito's token endpoint); tests inject their own. */
export type HttpFetch = (input: string, init?: RequestInit) => Promise<Response>;

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a requested redirect URI is one the client registered: the same string, except that a
 * loopback `http` URI may name any port (RFC 8252 §7.3, OAuth 2.1 §2.3.1: native clients listen on
 * an ephemeral port they learn only at run time). Host, path and query must still match.
 */
export function isRegisteredRedirect(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const wanted = loopbackWithoutPort(requested);
  return wanted !== undefined && registered.some((r) => loopbackWithoutPort(r) === wanted);
}

/** A loopback http URI in normalised form without its port; undefined for anything else. */
function loopbackWithoutPort(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  // No dot segments, encoded or not: `/a/../cb` must not pass for `/cb` once normalised.
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname) || raw.includes('#') || /\/\.\.?(?:[/?]|$)|%2e/i.test(raw)) return undefined;
  u.port = '';
  return u.href;
}

/**
 * Why a redirect URI is refused, or undefined when it is acceptable. The MCP authorization spec
 * allows https, or http on loopback for native clients (RFC 8252 §7.3); no fragment (RFC 6749
 * §3.1.2), no user info (it would be echoed into a URL the user sees).
 */
export function redirectUriProblem(raw: string): string | undefined {
  if (raw.length > 2000) return 'is longer than 2000 characters';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (raw.includes('#')) return 'must not contain a fragment';
  if (u.username !== '' || u.password !== '') return 'must not contain user information';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return undefined;
  return 'must use https, or http on a loopback host (localhost, 127.0.0.1, [::1])';
}

/** RFC 7591 §3.2.2 error of a registration (or of a metadata document). */
export class ClientMetadataError extends Error {
  constructor(
    readonly error: 'invalid_redirect_uri' | 'invalid_client_metadata',
    message: string,
  ) {
    super(message);
    this.name = 'ClientMetadataError';
  }
}

const GRANTS = ['authorization_code', 'refresh_token'] as const;

/** What RFC 7591 metadata the front honours; anything else is accepted and ignored (§2). */
const RegistrationSchema = z.looseObject({
  // Optional here (zod 4.6 refuses a missing key even for unknown()): a missing or bad list is invalid_redirect_uri, below.
  redirect_uris: z.unknown().optional(),
  client_name: z.string().max(200).optional(),
  grant_types: z.array(z.string()).max(10).optional(),
  response_types: z.array(z.string()).max(10).optional(),
  token_endpoint_auth_method: z.string().optional(),
  scope: z.string().max(1000).optional(),
});

export interface ValidatedMetadata {
  redirectUris: string[];
  clientName?: string;
  grantTypes: Array<(typeof GRANTS)[number]>;
}

/** Validates RFC 7591 client metadata (a registration body or a metadata document's fields). */
export function validateClientMetadata(body: unknown): ValidatedMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ClientMetadataError('invalid_client_metadata', 'the body must be a JSON object');
  }
  const parsed = RegistrationSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ClientMetadataError('invalid_client_metadata', `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const m = parsed.data;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new ClientMetadataError('invalid_redirect_uri', 'redirect_uris must be a non-empty array');
  if (uris.length > 10) throw new ClientMetadataError('invalid_redirect_uri', 'at most 10 redirect_uris');
  for (const u of uris) {
    if (typeof u !== 'string') throw new ClientMetadataError('invalid_redirect_uri', 'each redirect URI must be a string');
    const problem = redirectUriProblem(u);
    if (problem) throw new ClientMetadataError('invalid_redirect_uri', `redirect URI ${JSON.stringify(u.slice(0, 200))} ${problem}`);
  }
  // Public clients only (PKCE protects the code): a requested client_secret_post or _basic is
  // answered as `none` rather than refused (RFC 7591 §3.2.1 lets the server substitute values and
  // the response says which apply), since some SDKs ask for a secret by default.
  // RFC 7591 defaults grant_types to authorization_code; MCP clients expect refresh tokens, so
  // an omitted list means both (the response says so).
  const grants = m.grant_types ?? [...GRANTS];
  const unknownGrant = grants.find((g) => !(GRANTS as readonly string[]).includes(g));
  if (unknownGrant !== undefined)
    throw new ClientMetadataError('invalid_client_metadata', `grant type "${unknownGrant.slice(0, 50)}" is not supported (authorization_code, refresh_token)`);
  if (!grants.includes('authorization_code')) throw new ClientMetadataError('invalid_client_metadata', 'grant_types must include authorization_code');
  const responseTypes = m.response_types ?? ['code'];
  if (responseTypes.some((r) => r !== 'code')) throw new ClientMetadataError('invalid_client_metadata', 'response_types must be ["code"]');
  // Control characters would only serve to make a name look like something else on the consent page.
  const name = m.client_name?.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return {
    redirectUris: [...new Set(uris as string[])],
    ...(name && { clientName: name }),
    grantTypes: GRANTS.filter((g) => grants.includes(g)),
  };
}

/** POST /oauth/register: a new public client with a random id, forgotten after `unusedTtlSeconds` unless it signs someone in. */
export async function registerClient(
  store: ClientStore,
  body: unknown,
  nowSeconds: number,
  unusedTtlSeconds: number,
): Promise<{ client: OAuthClient; response: Record<string, unknown> }> {
  const meta = validateClientMetadata(body);
  for (let attempt = 0; attempt < 3; attempt++) {
    const client: OAuthClient = {
      clientId: `mcpc_${randomId(16)}`,
      redirectUris: meta.redirectUris,
      ...(meta.clientName !== undefined && { clientName: meta.clientName }),
      grantTypes: meta.grantTypes,
      tokenEndpointAuthMethod: 'none',
      createdAt: nowSeconds,
      expiresAt: nowSeconds + unusedTtlSeconds,
    };
    if (await store.register(client)) {
      return {
        client,
        response: {
          client_id: client.clientId,
          client_id_issued_at: nowSeconds,
          redirect_uris: client.redirectUris,
          ...(client.clientName !== undefined && { client_name: client.clientName }),
          grant_types: client.grantTypes,
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      };
    }
  }
  throw new Error('could not allocate a client id');
}

export type Resolution = { ok: true; client: OAuthClient } | { ok: false; reason: string };

/** Client ids that are URLs are Client ID Metadata Documents; ours never contain `:`. */
export function isUrlClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

const DocumentSchema = z.looseObject({ client_id: z.string() });

/**
 * Finds a client by id: registered ones in the client store, URL ids by fetching their Client ID
 * Metadata Document (draft-ietf-oauth-client-id-metadata-document), which is then kept in the
 * store and in memory for `cacheSeconds` so a sign-in costs at most one fetch.
 */
export class ClientResolver {
  private readonly memo = new Map<string, { client: OAuthClient; until: number }>();

  constructor(
    private readonly store: ClientStore,
    private readonly cimd: OAuthFrontConfig['cimd'],
    /**
     * Fetches the documents. In a deployment this is `pinnedFetch` with `guardedLookup`, which
     * refuses host names that resolve to internal addresses and connects to the address it checked.
     */
    private readonly fetchImpl: HttpFetch,
    private readonly clock: () => number = Date.now,
  ) {}

  async resolve(clientId: string): Promise<Resolution> {
    if (clientId.length > 2000) return { ok: false, reason: 'client_id is too long' };
    if (!isUrlClientId(clientId)) {
      const client = await this.store.get(clientId);
      const expired = client?.expiresAt !== undefined && client.expiresAt <= Math.floor(this.clock() / 1000);
      if (!client || client.metadataExpiresAt !== undefined || expired) return { ok: false, reason: 'unknown client_id' };
      return { ok: true, client };
    }
    const problem = this.documentUrlProblem(clientId);
    if (problem) return { ok: false, reason: `client_id ${problem}` };
    const now = Math.floor(this.clock() / 1000);
    const hit = this.memo.get(clientId);
    if (hit && hit.until > now) return { ok: true, client: hit.client };
    const stored = await this.store.get(clientId);
    if (stored?.metadataExpiresAt !== undefined && stored.metadataExpiresAt > now) {
      this.remember(stored, stored.metadataExpiresAt);
      return { ok: true, client: stored };
    }
    const fetched = await this.fetchDocument(clientId, now);
    if (!fetched.ok) return fetched;
    if (this.cimd.cacheSeconds > 0) {
      await this.store.put(fetched.client);
      this.remember(fetched.client, now + this.cimd.cacheSeconds);
    }
    return fetched;
  }

  private remember(client: OAuthClient, until: number): void {
    if (this.memo.size >= 1000) this.memo.delete(this.memo.keys().next().value as string);
    this.memo.set(client.clientId, { client, until });
  }

  /** The document URL rules: https with a path, no fragment, credentials or dot segments; loopback only when allowed. */
  private documentUrlProblem(raw: string): string | undefined {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return 'is not a valid URL';
    }
    if (u.href !== raw) return 'is not in normalised form';
    if (u.hash !== '' || raw.includes('#')) return 'must not contain a fragment';
    if (u.username !== '' || u.password !== '') return 'must not contain user information';
    if (u.pathname === '/' || u.pathname === '') return 'must have a path';
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const local = LOOPBACK_HOSTS.has(u.hostname) || (isIP(host) !== 0 && privateAddress(host));
    if (local && !this.cimd.allowLoopback) return 'points at a loopback or private address';
    if (u.protocol === 'https:') return undefined;
    if (u.protocol === 'http:' && this.cimd.allowLoopback && LOOPBACK_HOSTS.has(u.hostname)) return undefined;
    return 'must be an https URL';
  }

  private async fetchDocument(url: string, now: number): Promise<Resolution> {
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        headers: { accept: 'application/json' },
        // A redirect would let the document's host send the fetch anywhere.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.cimd.timeoutMs),
      });
    } catch (err) {
      if (err instanceof AddressRefusedError) {
        return {
          ok: false,
          reason: err.why === 'private' ? 'client_id resolves to a loopback or private address' : 'client_id names a host that could not be resolved',
        };
      }
      return { ok: false, reason: 'the client metadata document could not be fetched' };
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: false, reason: `the client metadata document answered HTTP ${res.status}` };
    }
    const bytes = await readCappedBody(res, this.cimd.maxBytes).catch(() => undefined);
    const text = bytes && Buffer.from(bytes).toString('utf8');
    if (text === undefined) return { ok: false, reason: `the client metadata document exceeds ${this.cimd.maxBytes} bytes or could not be read` };
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return { ok: false, reason: 'the client metadata document is not JSON' };
    }
    const shaped = DocumentSchema.safeParse(doc);
    if (!shaped.success) return { ok: false, reason: 'the client metadata document has no client_id' };
    if (shaped.data.client_id !== url) return { ok: false, reason: 'the client metadata document names another client_id' };
    let meta: ValidatedMetadata;
    try {
      meta = validateClientMetadata(doc);
    } catch (err) {
      return { ok: false, reason: `the client metadata document is invalid: ${(err as Error).message}` };
    }
    return {
      ok: true,
      client: {
        clientId: url,
        redirectUris: meta.redirectUris,
        ...(meta.clientName !== undefined && { clientName: meta.clientName }),
        grantTypes: meta.grantTypes,
        tokenEndpointAuthMethod: 'none',
        createdAt: now,
        metadataExpiresAt: now + this.cimd.cacheSeconds,
        // The table forgets documents nobody has used for a day.
        expiresAt: now + 24 * 3600,
      },
    };
  }
}
