/**
 * The application shell: header (brand, navigation, reference switcher, logout) on every page,
 * and the page the address names. Everything shown comes from vexil's public HTTP API.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, setUnauthenticatedHandler } from './api.js';
import { NamespaceSwitcher } from './components/namespace-switcher.js';
import { PageTitle } from './components/page-title.js';
import { ReferenceSwitcher } from './components/reference-switcher.js';
import { TruthBanner } from './components/truth-banner.js';
import { AppContext, type AppContextValue } from './context.js';
import { rememberNamespace } from './lib/last-namespace.js';
import { forgetToken, readToken } from './lib/session-token.js';
import { matchRoute, paths, type Route } from './lib/routes.js';
import { ConsolePage } from './pages/console.js';
import { DiffPage } from './pages/diff.js';
import { EntityPage } from './pages/entity.js';
import { FlagPage } from './pages/flag.js';
import { FlagsPage } from './pages/flags.js';
import { HomePage } from './pages/home.js';
import { HistoryPage } from './pages/history.js';
import { LoginPage } from './pages/login.js';
import { NamespacesPage } from './pages/namespaces.js';
import { SegmentPage } from './pages/segment.js';
import { SegmentsPage } from './pages/segments.js';
import { StatusPage } from './pages/status.js';
import { Link, navigate, useLocation } from './router.js';
import type { Snapshots } from './types.js';

setUnauthenticatedHandler(() => {
  if (location.pathname === '/ui/login') return;
  forgetToken(sessionStorage);
  navigate(paths.login(location.pathname + location.search), { replace: true });
});

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return <HomePage />;
    case 'namespaces':
      return <NamespacesPage />;
    case 'flags':
      return <FlagsPage namespace={route.namespace} />;
    case 'flag':
      return <FlagPage namespace={route.namespace} flagKey={route.key} />;
    case 'segments':
      return <SegmentsPage namespace={route.namespace} />;
    case 'segment':
      return <SegmentPage namespace={route.namespace} segmentKey={route.key} />;
    case 'console':
      return <ConsolePage />;
    case 'entity':
      return <EntityPage />;
    case 'status':
      return <StatusPage />;
    case 'diff':
      return <DiffPage />;
    case 'history':
      return <HistoryPage />;
    default:
      return (
        <>
          <PageTitle title="Page not found" />
          <p>
            <Link href={paths.namespaces()}>The namespaces</Link>
          </p>
        </>
      );
  }
}

const NAV: ReadonlyArray<{ label: string; page: Route['page'][]; href: (ref?: string) => string }> = [
  { label: 'Flags', page: ['home', 'namespaces', 'flags', 'flag', 'segments', 'segment'], href: (ref) => paths.home(ref) },
  { label: 'Console', page: ['console'], href: (ref) => paths.console({ ref }) },
  { label: 'Entity', page: ['entity'], href: (ref) => paths.entity({ ref }) },
  { label: 'Diff', page: ['diff'], href: (ref) => paths.diff({ ref }) },
  { label: 'Status', page: ['status'], href: (ref) => paths.status(ref) },
  { label: 'History', page: ['history'], href: (ref) => paths.history(ref) },
];

/** Who is signed in, when authentication is on (`GET /auth/v1/self`); undefined otherwise. */
type Session = { kind: 'token' | 'cookie' } | undefined;

async function logout(session: Session): Promise<void> {
  // A pasted static token may be shared with scripts: logging out only forgets it in this tab.
  // A browser session (OIDC, code host) is ended on the server.
  if (session?.kind === 'cookie') await api('/auth/v1/self/expire', { method: 'PUT', body: {}, quiet401: true }).catch(() => {});
  forgetToken(sessionStorage);
  navigate(paths.login(), { replace: true });
}

export function App() {
  const loc = useLocation();
  const route = matchRoute(loc.path);
  const reference = loc.query.get('ref') ?? undefined;
  const [snapshots, setSnapshots] = useState<Snapshots | undefined>(undefined);
  const [snapshotsError, setSnapshotsError] = useState<ApiError | undefined>(undefined);
  const [session, setSession] = useState<Session>(undefined);
  const [tick, setTick] = useState(0);
  const reloadSnapshots = useCallback(() => setTick((n) => n + 1), []);
  const isLogin = route.page === 'login';

  useEffect(() => {
    if (isLogin) return;
    api<Snapshots>('/meta/snapshots').then(
      (s) => {
        setSnapshots(s);
        setSnapshotsError(undefined);
      },
      (err: unknown) => setSnapshotsError(err instanceof ApiError ? err : new ApiError(0, undefined, String(err))),
    );
  }, [loc.path, reference, tick, isLogin]);

  useEffect(() => {
    if (isLogin) return;
    // Without authentication there is nobody to ask about (and /auth/v1/self would answer 401).
    api<{ authentication: { required: boolean } }>('/meta/info')
      .then(async (info) => {
        if (!info.authentication.required) return undefined;
        await api('/auth/v1/self');
        return { kind: readToken(sessionStorage) !== undefined ? 'token' : 'cookie' } as const;
      })
      .then(setSession, () => setSession(undefined));
  }, [isLogin]);

  const firstAddress = useRef(true);
  useEffect(() => {
    // Focus the page's heading after client-side navigation, as a page load would for a screen
    // reader. Not on the first load itself: there the first Tab belongs to the skip link.
    if (firstAddress.current) {
      firstAddress.current = false;
      return;
    }
    const h = document.querySelector<HTMLElement>('main h1');
    if (h && document.activeElement === document.body) h.focus({ preventScroll: true });
  }, [loc.href]);

  // The namespace being browsed is remembered: home and "Flags" open it next time.
  const browsed = 'namespace' in route ? route.namespace : undefined;
  useEffect(() => {
    if (browsed !== undefined) rememberNamespace(localStorage, browsed);
  }, [browsed]);

  const ctx: AppContextValue = { reference, snapshots, snapshotsError, reloadSnapshots };
  if (isLogin) {
    return (
      <main id="main" class="login-main">
        <LoginPage next={loc.query.get('next')} />
      </main>
    );
  }
  return (
    <AppContext.Provider value={ctx}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link class="brand" href={paths.home(reference)}>
          vexil
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.label}>
                <Link href={n.href(reference)} aria-current={n.page.includes(route.page) ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        {/* Only where it changes something: the pages of one namespace and the list of them. */}
        {(browsed !== undefined || route.page === 'namespaces') && (
          <NamespaceSwitcher namespace={browsed} list={route.page === 'segments' || route.page === 'segment' ? 'segments' : 'flags'} />
        )}
        {/* Diff names its own base and head; Status lists every reference: switching would change nothing. */}
        {route.page !== 'diff' && route.page !== 'status' && <ReferenceSwitcher />}
        {session && (
          <button type="button" class="logout" onClick={() => void logout(session)}>
            Log out
          </button>
        )}
      </header>
      <main id="main">
        {/* The diff page shows one per side; Status is where the banner points. */}
        {route.page !== 'diff' && route.page !== 'status' && <TruthBanner reference={reference} />}
        <Page route={route} />
      </main>
    </AppContext.Provider>
  );
}
