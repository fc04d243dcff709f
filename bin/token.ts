import { parseArgs } from 'node:util';
import { authMode, localIssuerIdentity } from '../lambdas/identity/config';
import { LocalIssuer } from '../lambdas/identity/local-issuer';
import { MEMORY_NAME, MEMORY_SCOPES } from '../lambdas/identity/principal';
import { dataDir } from './local-stack/data-dir';

/**
 * `npm run token -- --sub alice --scope "memory:read memory:write" [--memories a,b] [--groups catalog-admins] [--ttl 3600]`
 * prints a bearer token the local stack accepts. It needs only the issuer key in DATA_DIR (created
 * on first use), not a running stack; PORT / PUBLIC_URL / AUTH_AUDIENCE must match the stack's.
 */
const MAX_TTL = 30 * 24 * 3600;

export function mintLocalToken(argv: string[], env: Record<string, string | undefined>): string {
  const { values } = parseArgs({
    args: argv,
    options: {
      sub: { type: 'string' },
      scope: { type: 'string', default: MEMORY_SCOPES.join(' ') },
      memories: { type: 'string' },
      groups: { type: 'string' },
      ttl: { type: 'string', default: '3600' },
      audience: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const mode = authMode(env);
  if (mode !== 'local') throw new Error(`tokens are minted by the local issuer; this deployment verifies ${mode} tokens`);
  const sub = values.sub?.trim();
  if (!sub) throw new Error('--sub is required (the account, e.g. --sub alice)');
  const scopes = (values.scope ?? '').split(/\s+/).filter(Boolean);
  const unknown = scopes.filter((s) => !(MEMORY_SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`--scope accepts ${MEMORY_SCOPES.join(', ')}; got ${unknown.join(', ')}`);
  let memories: string[] | undefined;
  if (values.memories !== undefined) {
    memories = values.memories.split(',').map((m) => m.trim());
    const bad = memories.filter((m) => !MEMORY_NAME.test(m));
    if (bad.length || memories.length === 0) throw new Error('--memories takes a comma list of memory names (1-64 chars of a-z 0-9 _ -)');
  }
  // User pool groups, as Cognito puts them in access tokens (`catalog-admins` edits the organisation's allow-list).
  const groups = values.groups?.split(',').map((g) => g.trim());
  if (groups?.some((g) => !/^[\w.@+=,-]{1,128}$/.test(g))) throw new Error('--groups takes a comma list of group names');
  const ttl = values.ttl ?? '3600';
  if (!/^\d+$/.test(ttl) || Number(ttl) < 1 || Number(ttl) > MAX_TTL) throw new Error(`--ttl must be 1-${MAX_TTL} seconds`);

  const identity = localIssuerIdentity(env);
  const issuer = LocalIssuer.loadOrCreate(dataDir(env.DATA_DIR || '.data').issuerKey, identity.issuer);
  return issuer.signAccessToken({
    sub,
    scope: scopes.join(' '),
    ...(memories && { memories }),
    ...(groups && { groups }),
    ttlSeconds: Number(ttl),
    audience: values.audience ?? identity.audience,
  });
}

if (require.main === module) {
  try {
    process.stdout.write(`${mintLocalToken(process.argv.slice(2), process.env)}\n`);
  } catch (err) {
    console.error('[token]', err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
