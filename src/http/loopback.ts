/**
 * Whether a URL may be fetched over plain `http:`: only when its host is a loopback address
 * (`localhost`, 127.0.0.0/8, `::1`), where nothing crosses a network. Used for URLs vexil sends a
 * credential to (a cluster's discovery and key set, which get the pod's service-account token):
 * anywhere else such a request would carry the credential in clear. Pure: no name resolution.
 */

/** True for `localhost`, an IPv4 address in 127.0.0.0/8, or `::1` (as URL.hostname spells them). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h === '[::1]' || h === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Why `url` must not be used for a credential-bearing request, or undefined when it may. */
export function cleartextProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:') {
    return isLoopbackHost(parsed.hostname) ? undefined : 'plain http would send the service-account token in clear: use https (http is allowed for loopback addresses only)';
  }
  return `unsupported scheme "${parsed.protocol}" (use https)`;
}
