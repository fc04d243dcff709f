/** Open CORS on catalog reads (spec 1); the headers a browser may read are listed explicitly. */
export const EXPOSED_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

export function corsHeaders(): Record<string, string> {
  return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS };
}

export function preflightHeaders(allowed: string[]): Record<string, string> {
  return {
    ...corsHeaders(),
    'access-control-allow-methods': [...allowed, 'OPTIONS'].join(', '),
    'access-control-allow-headers': 'Authorization, Content-Type',
    'access-control-max-age': '86400',
  };
}
