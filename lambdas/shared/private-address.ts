import { isIP } from 'node:net';

/**
 * Loopback, private, carrier-grade NAT, link-local and unspecified address literals: what a fetch of
 * a URL someone else chose must never reach (SSRF). IPv4-mapped IPv6 (`::ffff:…`) is refused whole,
 * since the embedded address could be any of these. Anything that is not an address literal is false.
 */
export function privateAddress(ip: string): boolean {
  const kind = isIP(ip);
  if (kind === 4) {
    const [a, b] = ip.split('.').map(Number);
    return (
      a === 10 ||
      a === 127 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (kind === 6) {
    const v6 = ip.toLowerCase();
    return v6 === '::1' || v6 === '::' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80') || v6.startsWith('::ffff:');
  }
  return false;
}
