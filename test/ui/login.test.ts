/**
 * Signing in to the web UI when `authentication.required`, in headless Chromium against a real
 * `vexil serve` offering the token method (bootstrap token from the config) and OIDC against a
 * real `oidc-provider` on loopback: `/` leads to the login page; a wrong token shows an error; the
 * pasted token shows the flags (never put in an address) and logging out returns to the login page;
 * a token expired while signed in sends the next request back to the login page;
 * the "Sign in with test" button leads to the provider's sign-in form, filled in the browser, and back to the UI
 * signed in with the session cookie, and logging out ends that session on the server.
 */
import type { Page } from 'playwright-core';
import tap from 'tap';
import { startOidcProvider } from '../support/oidc-provider.js';
import { freePort } from '../support/throwaway-db.js';
import { startUi, uiTests } from '../support/ui-harness.js';

const t = uiTests(tap);

const TOKEN = 'ui-login-bootstrap-token';
const CLIENT_ID = 'vexil-ui';
const CLIENT_SECRET = 'ui-oidc-client-secret-7c21';
/** The browser's line for an answer the test provokes: 401 before signing in, or for a wrong token. */
const UNAUTHORIZED = /Failed to load resource: the server responded with a status of 401/;

/** Pastes a token on the login page and submits it. */
async function signInWithToken(page: Page, token: string): Promise<void> {
  await page.getByLabel('Client token').fill(token);
  await page.getByRole('button', { name: 'Sign in with token' }).click();
}

t.test('login to the UI with a static token and with OIDC', async (t) => {
  // vexil's own address is in the provider's client registration: pick its port first.
  const port = await freePort();
  const vexil = `http://127.0.0.1:${port}`;
  const provider = await startOidcProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${vexil}/auth/v1/method/oidc/test/callback`,
    requirePkce: true,
    accounts: { alice: { email: 'alice@example.test', email_verified: true, name: 'Alice' } },
    loginForm: true,
  });
  t.teardown(() => provider.close());
  const ui = await startUi(t, {
    port,
    authentication: [
      'authentication:',
      '  required: true',
      '  session: { domain: 127.0.0.1 }',
      '  methods:',
      '    token:',
      '      enabled: true',
      `      bootstrap: { token: ${TOKEN} }`,
      '    oidc:',
      '      enabled: true',
      '      providers:',
      '        test:',
      `          issuer_url: ${provider.issuer}`,
      `          client_id: ${CLIENT_ID}`,
      `          client_secret: ${CLIENT_SECRET}`,
      `          redirect_address: ${vexil}`,
      '          scopes: [email, profile]',
      '          use_pkce: true',
    ].join('\n'),
  });
  t.equal(ui.url, vexil);

  await ui.test(t, '/ leads to the login page: a button per session method and the token field', async (t, tab) => {
    tab.allowError(UNAUTHORIZED);
    await tab.open('/');
    const text = await tab.waitText(/Sign in with test/);
    t.match(text, /^Sign in$/m);
    t.match(text, /Client token/);
    t.match(new URL(tab.page.url()).pathname, '/ui/login');
    await tab.checkpoint(t, 'ui-login');
  });

  await ui.test(t, 'a wrong token shows an error and stays on the login page', async (t, tab) => {
    tab.allowError(UNAUTHORIZED);
    await tab.open('/ui/login');
    await signInWithToken(tab.page, 'not-a-token');
    const text = await tab.waitText(/refused/);
    t.match(text, /Error 401: this token was refused \(unknown, expired or revoked\)/);
    t.match(new URL(tab.page.url()).pathname, '/ui/login');
    t.equal(await tab.page.evaluate('sessionStorage.length'), 0, 'the refused token is not kept');
  });

  await ui.test(t, 'the pasted token shows the flags; logging out returns to the login page', async (t, tab) => {
    const { page } = tab;
    tab.allowError(UNAUTHORIZED);
    const addresses: string[] = [];
    page.on('request', (r) => addresses.push(r.url()));
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/Sign in with token/);
    t.equal(new URL(page.url()).searchParams.get('next'), '/ui/namespaces/default/flags', 'the login page knows where to return');
    await signInWithToken(page, TOKEN);
    const text = await tab.waitText(/Showing 1–3 of 3 flags/);
    t.match(text, /payment-provider\s+Payment provider\s/);
    t.match(new URL(page.url()).pathname, '/ui/namespaces/default/flags');
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    await page.reload();
    await tab.waitText(/Showing 1–3 of 3 flags/);
    t.pass('still signed in after a reload (the token is kept for the tab)');

    await page.getByRole('button', { name: 'Log out' }).click();
    await tab.waitText(/Sign in with token/);
    t.match(new URL(page.url()).pathname, '/ui/login');
    t.equal(await page.evaluate('sessionStorage.length'), 0, 'the token is forgotten');
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/Sign in with token/);
    t.pass('the flags need signing in again');
    t.same(
      addresses.filter((a) => a.includes(TOKEN)),
      [],
      'the token never appears in an address',
    );
  });

  await ui.test(t, 'a token expired while signed in: the next request leads back to the login page', async (t, tab) => {
    const { page } = tab;
    tab.allowError(UNAUTHORIZED);
    const created = await ui.post('/auth/v1/method/token', { name: 'ui-short-lived' }, TOKEN);
    t.equal(created.status, 200);
    const token: string = created.body.clientToken;
    await tab.open('/ui/login');
    await signInWithToken(page, token);
    await tab.waitText(/^Flags in \S+$/m); // home: the flags of the namespace last used

    const expired = await fetch(`${vexil}/auth/v1/self/expire`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    t.equal(expired.status, 200, 'the token is expired on the server');
    // The next page the person opens (a fresh load: the app's own background requests may already
    // meet the expired token and re-render the list under an in-page click).
    await tab.open('/ui/namespaces/catalog/flags');
    await tab.waitText(/Sign in with token/);
    const at = new URL(page.url());
    t.same([at.pathname, at.searchParams.get('next')], ['/ui/login', '/ui/namespaces/catalog/flags'], 'the login page, ready to return where the person was going');
    t.equal(await page.evaluate('sessionStorage.length'), 0, 'the dead token is forgotten');
  });

  await ui.test(t, 'OIDC: the provider button signs in through the provider and back; logout ends the session', async (t, tab) => {
    const { page } = tab;
    tab.allowError(UNAUTHORIZED);
    const visited: string[] = [];
    page.on('request', (r) => {
      if (r.isNavigationRequest()) visited.push(new URL(r.url()).origin);
    });
    await tab.open('/');
    await tab.waitText(/Sign in with test/);
    await page.getByRole('button', { name: 'Sign in with test' }).click();
    // The provider's own sign-in form; then it sends the browser back to vexil's callback, which
    // sets the session cookie and redirects to the UI.
    await page.getByRole('heading', { name: 'Test provider' }).waitFor();
    t.equal(new URL(page.url()).origin, provider.issuer, 'at the provider');
    await page.getByLabel('Account').fill('alice');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Home: the flags of the namespace last used in this browser.
    await tab.waitText(/^Flags in \S+$/m);
    t.ok(visited.includes(provider.issuer), 'the browser went through the provider');
    t.equal(new URL(page.url()).origin, vexil);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    const session = (await ui.browser.cookies(vexil)).find((c) => c.name === 'svc_client_token');
    t.ok(session?.httpOnly, 'the session cookie is set, HttpOnly');
    const self = await fetch(`${vexil}/auth/v1/self`, { headers: { cookie: `svc_client_token=${session?.value}` } });
    t.equal(self.status, 200);
    t.match(await self.json(), { method: 'METHOD_OIDC', metadata: { 'io.svc.auth.oidc.email': 'alice@example.test', 'io.svc.auth.oidc.provider': 'test' } });

    await page.getByRole('button', { name: 'Log out' }).click();
    await tab.waitText(/Sign in with test/);
    const after = await fetch(`${vexil}/auth/v1/self`, { headers: { cookie: `svc_client_token=${session?.value}` } });
    t.equal(after.status, 401, 'logging out expired the session on the server');
    await tab.open('/');
    await tab.waitText(/Sign in with test/);
    t.match(new URL(page.url()).pathname, '/ui/login');
  });
});
