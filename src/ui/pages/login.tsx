/**
 * Sign in: a button per session-compatible method the server offers (`GET /auth/v1/method`: each
 * OIDC provider, the code host), which starts the server's login flow (it ends with the session
 * cookie and a redirect back to `/`), and a field to paste a static client token, kept in this
 * tab's sessionStorage and sent as a Bearer header, never in an address.
 */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { forgetToken, saveToken } from '../lib/session-token.js';
import { safeNext } from '../lib/routes.js';
import { navigate } from '../router.js';
import type { AuthMethodInfo } from '../types.js';
import { useApi } from '../use-api.js';

interface LoginButton {
  label: string;
  authorizeUrl: string;
}

function buttonsOf(methods: readonly AuthMethodInfo[]): LoginButton[] {
  const out: LoginButton[] = [];
  for (const m of methods) {
    if (!m.enabled || !m.sessionCompatible) continue;
    const meta = (m.metadata ?? {}) as Record<string, unknown>;
    if (m.method === 'METHOD_OIDC') {
      const providers = (meta['providers'] ?? {}) as Record<string, { authorize_url?: string }>;
      for (const [name, p] of Object.entries(providers)) {
        if (typeof p.authorize_url === 'string') out.push({ label: `Sign in with ${name}`, authorizeUrl: p.authorize_url });
      }
    } else if (m.method === 'METHOD_CODE_HOST' && typeof meta['authorize_url'] === 'string') {
      out.push({ label: 'Sign in with the code host', authorizeUrl: meta['authorize_url'] });
    }
  }
  return out;
}

async function startLogin(b: LoginButton): Promise<void> {
  // The server answers {authorizeUrl} and sets the login-state cookie; the provider brings the
  // browser back to the server's callback, which sets the session and redirects to the UI.
  const { authorizeUrl } = await api<{ authorizeUrl: string }>(b.authorizeUrl, { quiet401: true });
  location.assign(authorizeUrl);
}

export function LoginPage({ next }: { next: string | null }) {
  const methods = useApi<{ methods: AuthMethodInfo[] }>('/auth/v1/method');
  const [token, setToken] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const useToken = async (e: Event) => {
    e.preventDefault();
    if (token.trim() === '') return;
    setBusy(true);
    setError(undefined);
    saveToken(sessionStorage, token);
    try {
      await api('/auth/v1/self', { quiet401: true });
      navigate(safeNext(next), { replace: true });
    } catch (err) {
      forgetToken(sessionStorage);
      setError(err instanceof ApiError && err.status === 401 ? new ApiError(401, 16, 'this token was refused (unknown, expired or revoked)') : (err as ApiError));
    } finally {
      setBusy(false);
    }
  };

  const buttons = methods.state === 'ok' ? buttonsOf(methods.data.methods) : [];
  return (
    <div class="login">
      <p class="brand">vexil</p>
      <PageTitle title="Sign in" />
      {methods.state === 'loading' && <Loading what="sign-in methods" />}
      {buttons.length > 0 && (
        <ul class="login-buttons">
          {buttons.map((b) => (
            <li key={b.authorizeUrl}>
              <button type="button" class="primary" onClick={() => void startLogin(b).catch((err: ApiError) => setError(err))}>
                {b.label}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="token-form" onSubmit={(e) => void useToken(e)}>
        <label for="client-token">Client token</label>
        <input
          id="client-token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
          aria-describedby="client-token-help"
        />
        <p id="client-token-help" class="muted">
          A static token from <code>vexil</code>'s token method. It stays in this browser tab only.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          Sign in with token
        </button>
      </form>
      {error && <ErrorBox error={error} />}
    </div>
  );
}
