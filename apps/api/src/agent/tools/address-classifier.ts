/**
 * Address classification for the SSRF guard (SECURITY.md, "SSRF guard of web_fetch"). Only public unicast addresses
 * pass.
 *
 * Host strings are normalised first: brackets, zone ids and trailing dots removed, every IPv4 spelling that
 * resolvers and URL parsers accept (decimal `2130706433`, hex `0x7f000001`, octal `0177.0.0.1`, short `127.1`)
 * read as the address it means, and IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-translated, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) judged by the embedded IPv4 address.
 */
import ipaddr from 'ipaddr.js';

export type AddressVerdict =
  | { allowed: true; address: string }
  | { allowed: false; address: string; range: string };

/** Strips brackets, an IPv6 zone id and trailing dots, and lower-cases a host name or literal. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
  const zone = value.indexOf('%');
  if (zone !== -1 && value.includes(':')) value = value.slice(0, zone);
  while (value.endsWith('.')) value = value.slice(0, -1);
  return value;
}

/**
 * The canonical IP address a host string stands for when it is an IP literal in any accepted spelling, else null
 * (a name that needs DNS).
 */
export function parseIpLiteral(host: string): string | null {
  const value = normalizeHost(host);
  if (value === '') return null;
  if (value.includes(':')) {
    return ipaddr.IPv6.isValid(value) ? ipaddr.IPv6.parse(value).toString() : null;
  }
  // IPv4 in any of the inet_aton spellings; a name like "example.com" is not valid here
  if (!/^[0-9a-fx.]+$/.test(value)) return null;
  return ipaddr.IPv4.isValid(value) ? ipaddr.IPv4.parse(value).toString() : null;
}

function embeddedIpv4(address: ipaddr.IPv6, offsetWords: number): ipaddr.IPv4 {
  const parts = address.parts;
  const high = parts[offsetWords] ?? 0;
  const low = parts[offsetWords + 1] ?? 0;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function classifyIpv4(address: ipaddr.IPv4, shown: string): AddressVerdict {
  const range = address.range();
  return range === 'unicast' ? { allowed: true, address: shown } : { allowed: false, address: shown, range };
}

/** Classifies an IP address (any spelling parseIpLiteral accepts). A non-IP string is refused. */
export function classifyAddress(input: string): AddressVerdict {
  const literal = parseIpLiteral(input);
  if (literal === null) return { allowed: false, address: input, range: 'not an IP address' };
  const parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv4') return classifyIpv4(parsed as ipaddr.IPv4, literal);
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return classifyIpv4(embeddedIpv4(v6, 6), literal);
    case 'rfc6052': {
      // the well-known NAT64 prefix 64:ff9b::/96 embeds a public IPv4 address; the local-use 64:ff9b:1::/48 is refused
      const isWellKnown = v6.parts[0] === 0x64 && v6.parts[1] === 0xff9b && v6.parts.slice(2, 6).every((p) => p === 0);
      return isWellKnown ? classifyIpv4(embeddedIpv4(v6, 6), literal) : { allowed: false, address: literal, range };
    }
    case '6to4':
      return classifyIpv4(embeddedIpv4(v6, 1), literal);
    case 'unicast': {
      // global unicast is 2000::/3; anything else unassigned is refused
      const first = v6.parts[0] ?? 0;
      return first >= 0x2000 && first <= 0x3fff
        ? { allowed: true, address: literal }
        : { allowed: false, address: literal, range: 'reserved' };
    }
    default:
      return { allowed: false, address: literal, range };
  }
}
