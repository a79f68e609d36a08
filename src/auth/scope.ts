/**
 * What a request path needs from authentication, decided before routing: public (never a token),
 * one of the sections `exclude.*` can open, and which namespace the request is confined to, for
 * namespace-scoped tokens (interface §5.3; Flipt's namespace matching, reference §2.13).
 *
 * Anything not recognised needs a token and is not scoped to a namespace: unknown paths are
 * denied by default instead of being guessed at.
 */

import { isUiPath } from '../http/ui-paths.js';

export type Section = 'management' | 'evaluation' | 'auth' | 'metrics' | 'other';

/** Where the single namespace of a request is found. */
export type NamespaceSource =
  /** The endpoint spans namespaces (or none): a scoped token is refused. */
  | { from: 'none' }
  | { from: 'path'; namespace: string }
  /** Evaluation bodies: `namespaceKey` (empty = the path's namespace, else `default`); batches: every item's. */
  | { from: 'body'; batch: boolean; pathNamespace?: string }
  /** Legacy batch bodies (`/api/v1/batch-evaluate`): `namespaceKey` (empty = `default`); items' empty or the same. */
  | { from: 'legacy-batch-body' }
  /** OFREP: the `X-Svc-Namespace` / `X-Flipt-Namespace` header (absent = `default`); the body has no namespace. */
  | { from: 'header' };

export type RequestScope =
  /** `identify`: a presented credential is checked and the caller known when valid, never refused (`/ready` says more then). */
  | { public: true; identify?: true }
  | { public: false; section: Section; namespace: NamespaceSource; self: boolean };

export const DEFAULT_NAMESPACE = 'default';

// `/metrics` names namespaces, flags and references: it is the `metrics` section (`exclude.metrics`
// opens it, or `server.metrics_address` serves it elsewhere). `/ready` is public and says more to a
// caller it knows.
const OPERATIONAL = new Set(['/health']);

function decodeSegment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

const NONE: NamespaceSource = { from: 'none' };

export function classifyRequest(method: string, rawPath: string): RequestScope {
  // The router treats one trailing slash as absent; the classification must agree with it.
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  if (OPERATIONAL.has(path)) return { public: true };
  if (path === '/ready') return { public: true, identify: true };
  if (path === '/metrics') return { public: false, section: 'metrics', namespace: NONE, self: false };

  const read = method === 'GET' || method === 'HEAD';
  // The web UI's pages and assets: the login page among them, so no token can be asked for.
  // Everything they show comes from the API, which asks for one.
  if (read && isUiPath(path)) return { public: true };
  if (path === '/auth/v1/method' && read) return { public: true };
  // The login flows of the session methods and the cluster exchange are how a caller gets a
  // token in the first place (reference §2.6).
  if (path.startsWith('/auth/v1/method/oidc/') || path.startsWith('/auth/v1/method/code_host/') || path.startsWith('/auth/v1/method/github/')) {
    return { public: true };
  }
  if ((path === '/auth/v1/method/cluster/serviceaccount' || path === '/auth/v1/method/kubernetes/serviceaccount') && method === 'POST') {
    return { public: true };
  }
  // Push webhooks: Git hosts and registries send no bearer token; each delivery is authenticated
  // by its own signature or token (src/server/hooks/), and an unconfigured hook is 404.
  if (path.startsWith('/hooks/')) return { public: true };

  const segments = path.split('/');
  if (path === '/api/v1' || path.startsWith('/api/v1/')) {
    // Flipt's legacy evaluation lives under /api/v1 (management section, as in Flipt); its
    // unnamespaced forms name the namespace in the body, the namespaced ones in the path.
    if (path === '/api/v1/evaluate') return { public: false, section: 'management', namespace: { from: 'body', batch: false }, self: false };
    if (path === '/api/v1/batch-evaluate') return { public: false, section: 'management', namespace: { from: 'legacy-batch-body' }, self: false };
    // The diff spans namespaces (its `namespace` parameter is a filter, not a scope): unscoped tokens only.
    if (path === '/api/v1/diff') return { public: false, section: 'management', namespace: NONE, self: false };
    // The checks of the whole state span namespaces (`namespace` is a filter); the namespaced form is scoped.
    if (path === '/api/v1/checks') return { public: false, section: 'management', namespace: NONE, self: false };
    return { public: false, section: 'management', namespace: managementNamespace(segments), self: false };
  }
  if (path === '/evaluate/v1' || path.startsWith('/evaluate/v1/')) {
    // The live-update stream of one namespace (Server-Sent Events): /evaluate/v1/namespaces/{namespace}/stream
    if (segments[3] === 'namespaces' && segments[5] === 'stream' && segments.length === 6) {
      const ns = decodeSegment(segments[4]!);
      return { public: false, section: 'evaluation', namespace: ns !== undefined ? { from: 'path', namespace: ns } : NONE, self: false };
    }
    // /evaluate/v1/namespaces/{namespaceKey}/variant
    let pathNamespace: string | undefined;
    if (segments[3] === 'namespaces' && segments.length >= 5) {
      pathNamespace = decodeSegment(segments[4]!);
      if (pathNamespace === undefined) return { public: false, section: 'evaluation', namespace: NONE, self: false };
    }
    return {
      public: false,
      section: 'evaluation',
      namespace: { from: 'body', batch: path === '/evaluate/v1/batch', ...(pathNamespace !== undefined ? { pathNamespace } : {}) },
      self: false,
    };
  }
  if (path.startsWith('/internal/v1/evaluation/')) {
    // The client-side evaluation snapshot: /internal/v1/evaluation/snapshot/namespace/{key}
    const ns = segments[4] === 'snapshot' && segments[5] === 'namespace' && segments.length === 7 ? decodeSegment(segments[6]!) : undefined;
    return { public: false, section: 'evaluation', namespace: ns !== undefined ? { from: 'path', namespace: ns } : NONE, self: false };
  }
  if (path.startsWith('/client/v2/')) {
    // Flipt v2's client paths: /client/v2/environments/{environment}/namespaces/{namespace}/{snapshot|stream}
    const ns =
      segments[3] === 'environments' && segments[5] === 'namespaces' && segments.length === 8 && (segments[7] === 'snapshot' || segments[7] === 'stream')
        ? decodeSegment(segments[6]!)
        : undefined;
    return { public: false, section: 'evaluation', namespace: ns !== undefined ? { from: 'path', namespace: ns } : NONE, self: false };
  }
  if (path === '/ofrep' || path.startsWith('/ofrep/')) {
    // OFREP's change events of one namespace: /ofrep/v1/namespaces/{namespace}/events (an
    // EventSource sends no headers, so the namespace is in the path, as on the other streams).
    if (segments[2] === 'v1' && segments[3] === 'namespaces' && segments[5] === 'events' && segments.length === 6) {
      const ns = decodeSegment(segments[4]!);
      return { public: false, section: 'evaluation', namespace: ns !== undefined ? { from: 'path', namespace: ns } : NONE, self: false };
    }
    // OFREP is evaluation (`exclude.evaluation` opens it). Flipt refuses namespace-scoped tokens
    // here; vexil lets one through when the namespace header names its namespace.
    return { public: false, section: 'evaluation', namespace: { from: 'header' }, self: false };
  }
  if (path === '/auth/v1' || path.startsWith('/auth/v1/')) {
    return { public: false, section: 'auth', namespace: NONE, self: path === '/auth/v1/self' || path.startsWith('/auth/v1/self/') };
  }
  return { public: false, section: 'other', namespace: NONE, self: false };
}

/**
 * `/api/v1/namespaces` (list, create) spans namespaces; `/api/v1/namespaces/{key}[/...]` is
 * `{key}`; the legacy unnamespaced forms (`/api/v1/flags`...) read `default`.
 */
function managementNamespace(segments: string[]): NamespaceSource {
  // ['', 'api', 'v1', ...]
  if (segments.length <= 3) return NONE;
  if (segments[3] !== 'namespaces') return { from: 'path', namespace: DEFAULT_NAMESPACE };
  if (segments.length === 4) return NONE;
  const ns = decodeSegment(segments[4]!);
  return ns === undefined ? NONE : { from: 'path', namespace: ns };
}
