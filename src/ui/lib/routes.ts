/**
 * The UI's addresses: which page a path shows, and the path of each page. The reference being
 * browsed travels in the `ref` query parameter (absent = the server's default reference), so every
 * address can be shared and names exactly what it shows.
 */

export type Route =
  | { page: 'home' }
  | { page: 'namespaces' }
  | { page: 'flags'; namespace: string }
  | { page: 'flag'; namespace: string; key: string }
  | { page: 'segments'; namespace: string }
  | { page: 'segment'; namespace: string; key: string }
  | { page: 'console' }
  | { page: 'entity' }
  | { page: 'status' }
  | { page: 'diff' }
  | { page: 'history' }
  | { page: 'login' }
  | { page: 'not-found' };

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The page of a path (`/` and `/ui` are home: the flags of the namespace last used). */
export function matchRoute(path: string): Route {
  let p = path;
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p === '/' || p === '/ui') return { page: 'home' };
  if (p === '/ui/namespaces') return { page: 'namespaces' };
  if (p === '/ui/console') return { page: 'console' };
  if (p === '/ui/entity') return { page: 'entity' };
  if (p === '/ui/status') return { page: 'status' };
  if (p === '/ui/diff') return { page: 'diff' };
  if (p === '/ui/history') return { page: 'history' };
  if (p === '/ui/login') return { page: 'login' };
  const s = p.split('/');
  // ['', 'ui', 'namespaces', ns, 'flags' | 'segments', key?]
  if (s.length >= 5 && s.length <= 6 && s[1] === 'ui' && s[2] === 'namespaces') {
    const namespace = decode(s[3]!);
    const key = s.length === 6 ? decode(s[5]!) : '';
    if (namespace === undefined || namespace === '' || key === undefined) return { page: 'not-found' };
    if (s[4] === 'flags') return s.length === 6 ? { page: 'flag', namespace, key } : { page: 'flags', namespace };
    if (s[4] === 'segments') return s.length === 6 ? { page: 'segment', namespace, key } : { page: 'segments', namespace };
  }
  return { page: 'not-found' };
}

function withParams(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}

const enc = encodeURIComponent;

export const paths = {
  home: (ref?: string) => withParams('/ui', { ref }),
  namespaces: (ref?: string) => withParams('/ui/namespaces', { ref }),
  flags: (namespace: string, ref?: string, extra: Record<string, string | undefined> = {}) =>
    withParams(`/ui/namespaces/${enc(namespace)}/flags`, { ref, ...extra }),
  flag: (namespace: string, key: string, ref?: string) => withParams(`/ui/namespaces/${enc(namespace)}/flags/${enc(key)}`, { ref }),
  segments: (namespace: string, ref?: string, extra: Record<string, string | undefined> = {}) =>
    withParams(`/ui/namespaces/${enc(namespace)}/segments`, { ref, ...extra }),
  segment: (namespace: string, key: string, ref?: string) => withParams(`/ui/namespaces/${enc(namespace)}/segments/${enc(key)}`, { ref }),
  console: (params: { ref?: string; namespace?: string; flag?: string; entity?: string; context?: string } = {}) => withParams('/ui/console', params),
  entity: (params: { ref?: string; namespace?: string; entity?: string; context?: string } = {}) => withParams('/ui/entity', params),
  status: (ref?: string) => withParams('/ui/status', { ref }),
  diff: (params: { ref?: string; base?: string; head?: string; namespace?: string; impact?: string } = {}) => withParams('/ui/diff', params),
  history: (ref?: string, params: { pageToken?: string; limit?: string } = {}) => withParams('/ui/history', { ref, ...params }),
  login: (next?: string) => withParams('/ui/login', { next }),
};

/** The same address with `ref` set to another reference (or removed for the default). */
export function switchReference(pathAndQuery: string, ref: string | undefined): string {
  const q = pathAndQuery.indexOf('?');
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : pathAndQuery.slice(q + 1));
  if (ref === undefined || ref === '') params.delete('ref');
  else params.set('ref', ref);
  // A page number or page token belongs to the list it was taken from.
  params.delete('page');
  params.delete('pageToken');
  const s = params.toString();
  return s === '' ? path : `${path}?${s}`;
}

/** Only a path of this UI is a safe place to return to after login (no open redirect). */
export function safeNext(next: string | null | undefined): string {
  if (next === null || next === undefined || !next.startsWith('/ui/') || next.startsWith('//') || next.startsWith('/ui/login')) return '/ui';
  return next;
}
