/**
 * `host:port` listen addresses in the config (`server.metrics_address`): `127.0.0.1:9090`,
 * `[::1]:9090`, `:9090` (host left to the caller: the main listener's). Pure parsing, no I/O;
 * the config check and the server read them through this one function.
 */

export interface ListenAddress {
  /** Undefined for `:port`. */
  readonly host?: string;
  /** 0..65535 (0: any free port). */
  readonly port: number;
}

/** The address, or a message saying what is wrong with it. */
export function parseListenAddress(text: string): ListenAddress | string {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(text);
  if (m === null) return 'must be host:port ([ipv6]:port for an IPv6 address, :port for server.host)';
  const port = Number(m[3]);
  if (port > 65535) return 'the port must be 0..65535';
  const host = m[1] ?? m[2]!;
  return host === '' ? { port } : { host, port };
}
