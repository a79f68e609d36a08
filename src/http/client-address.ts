/**
 * The address a request came from, as `server.trusted_proxies` says to read it: the TCP peer,
 * unless the peer is a trusted proxy; then `X-Forwarded-For` is read from its right end (the hop
 * the trusted proxy itself saw) leftwards, skipping trusted addresses, and the first untrusted
 * address is the client. A client can write anything at the left of the header, so nothing left of
 * the first untrusted hop is believed. An entry that is not an IP address ends the walk at the last
 * trusted hop (its sender is unknown). Used where the address is recorded (audit events), not on
 * the evaluation path.
 *
 * Trusted entries are IPv4 or IPv6 addresses or CIDR ranges (`10.0.0.0/8`, `fd00::/8`); IPv4-mapped
 * IPv6 peers (`::ffff:10.1.2.3`) are read as IPv4. The walk looks at no more than MAX_HOPS entries.
 */
import { BlockList, isIP } from 'node:net';

/** Entries of X-Forwarded-For examined at most (right to left). */
export const MAX_HOPS = 32;

/** Why `entry` of `server.trusted_proxies` is not an address or a CIDR range; undefined when it is. */
export function trustedProxyProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `"${entry}" is not an IP address or CIDR range (such as 10.0.0.0/8)`;
  if (slash < 0) return undefined;
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry}": the prefix length must be 0 to ${max}`;
  return undefined;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; anything else unchanged. */
function unmapped(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export type ClientAddress = (peer: string | undefined, forwardedFor: string | string[] | undefined) => string | undefined;

/** The reader for one trust list (entries already checked by the config's semantic checks). */
export function clientAddressReader(trusted: readonly string[]): ClientAddress {
  if (trusted.length === 0) return (peer) => (peer === undefined ? undefined : unmapped(peer));
  const list = new BlockList();
  for (const entry of trusted) {
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (slash < 0) list.addAddress(address, type);
    else list.addSubnet(address, Number(entry.slice(slash + 1)), type);
  }
  const isTrusted = (address: string) => list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return (peer, forwardedFor) => {
    if (peer === undefined) return undefined;
    let client = unmapped(peer);
    if (!isTrusted(client) || forwardedFor === undefined) return client;
    const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
    let end = header.length;
    for (let hop = 0; hop < MAX_HOPS && end > 0; hop++) {
      const start = header.lastIndexOf(',', end - 1) + 1;
      const candidate = unmapped(header.slice(start, end).trim());
      end = start - 1;
      if (isIP(candidate) === 0) return client;
      client = candidate;
      if (!isTrusted(candidate)) return client;
    }
    return client;
  };
}
