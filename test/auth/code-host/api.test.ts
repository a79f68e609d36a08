/**
 * The code-host API client against the code-host fake running as a real HTTP server: the
 * authorize URL, the code exchange (JSON and form answers, refusals), the user API with paging,
 * Enterprise base paths, and the bounds (timeout, response size) with no credential in any error.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { CodeHostError, createCodeHostClient, MAX_PAGES, type CodeHostClient } from '../../../src/auth/code-host/api.js';
import { freePort } from '../../support/throwaway-db.js';
import { startCodeHostFake, type CodeHostFake, type FakeUser } from '../../support/code-host-fake.js';

const SECRET = 'test-secret';
const REDIRECT = 'http://127.0.0.1:9/auth/v1/method/code_host/callback';

function clientFor(fake: CodeHostFake, extra: { timeoutMs?: number; maxResponseBytes?: number; clientSecret?: string } = {}): CodeHostClient {
  return createCodeHostClient({
    serverUrl: fake.serverUrl,
    apiUrl: fake.apiUrl,
    clientId: 'test-client',
    clientSecret: extra.clientSecret ?? SECRET,
    ...(extra.timeoutMs !== undefined ? { timeoutMs: extra.timeoutMs } : {}),
    ...(extra.maxResponseBytes !== undefined ? { maxResponseBytes: extra.maxResponseBytes } : {}),
  });
}

/** Runs the authorize step as a browser would (the fake approves at once) and returns the code. */
async function codeFrom(authorizeUrl: string, login?: string): Promise<{ code: string; state: string | null }> {
  const url = new URL(authorizeUrl);
  if (login !== undefined) url.searchParams.set('login', login);
  const res = await fetch(url, { redirect: 'manual' });
  const to = new URL(res.headers.get('location')!);
  return { code: to.searchParams.get('code')!, state: to.searchParams.get('state') };
}

async function login(fake: CodeHostFake, client: CodeHostClient, scopes: string[], who?: string): Promise<string> {
  const { code } = await codeFrom(client.authorizeUrl({ redirectUri: REDIRECT, scopes, state: 's' }), who);
  return (await client.exchangeCode(code, REDIRECT)).accessToken;
}

async function rejectsWith(t: Test, p: Promise<unknown>, kind: string, pattern: RegExp): Promise<CodeHostError> {
  try {
    await p;
  } catch (err) {
    t.type(err, CodeHostError);
    t.equal((err as CodeHostError).kind, kind, `kind ${kind}`);
    t.match((err as Error).message, pattern);
    return err as CodeHostError;
  }
  t.fail('expected a CodeHostError');
  return new CodeHostError('malformed', 'none');
}

function noSecretIn(t: Test, fake: CodeHostFake, err: Error): void {
  const text = `${err.message} ${String(err.stack)}`;
  t.notOk(text.includes(SECRET), 'no client secret in the error');
  for (const token of fake.tokens.keys()) t.notOk(text.includes(token), 'no access token in the error');
}

t.test('authorize URL, exchange, user, emails, orgs, teams', async (t) => {
  const fake = await startCodeHostFake();
  t.teardown(() => fake.close());
  const client = clientFor(fake);
  const authorize = new URL(client.authorizeUrl({ redirectUri: REDIRECT, scopes: ['read:org', 'user:email'], state: 'st4te' }));
  t.equal(authorize.origin + authorize.pathname, `${fake.serverUrl}/login/oauth/authorize`);
  t.same(Object.fromEntries(authorize.searchParams), {
    client_id: 'test-client',
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'read:org user:email',
    state: 'st4te',
  });
  const { code, state } = await codeFrom(authorize.href);
  t.equal(state, 'st4te', 'the code host echoes the state');
  const grant = await client.exchangeCode(code, REDIRECT);
  t.match(grant.accessToken, /^gho_/);
  t.same(grant.scopes, ['read:org', 'user:email']);
  const exchange = fake.requests.find((r) => r.path === '/login/oauth/access_token')!;
  t.equal(exchange.method, 'POST');
  t.equal(exchange.query, '', 'nothing in the URL');
  t.equal(exchange.accept, 'application/json');
  t.same(Object.fromEntries(new URLSearchParams(exchange.body)), { client_id: 'test-client', client_secret: SECRET, code, redirect_uri: REDIRECT });

  t.same(await client.user(grant.accessToken), { login: 'alice', id: '1001', name: 'Alice Test', email: 'alice@example.test', avatarUrl: '' });
  t.equal(await client.primaryVerifiedEmail(grant.accessToken), 'alice@example.test');
  t.same(await client.organizations(grant.accessToken), ['acme']);
  t.same(await client.teams(grant.accessToken), [{ org: 'acme', slug: 'flag-admins' }]);
  const userCall = fake.requests.find((r) => r.path === '/user')!;
  t.equal(userCall.authorization, `Bearer ${grant.accessToken}`);
  t.equal(userCall.accept, 'application/vnd.github+json');

  await rejectsWith(t, client.exchangeCode(code, REDIRECT), 'refused', /refused the authorization code \(bad_verification_code\)/);

  // PKCE: the challenge in the URL, the verifier in the exchange; a wrong verifier is refused.
  const verifier = 'v'.repeat(43);
  const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
  const withPkce = new URL(client.authorizeUrl({ redirectUri: REDIRECT, scopes: [], state: 's', codeChallenge }));
  t.equal(withPkce.searchParams.get('code_challenge'), codeChallenge);
  t.equal(withPkce.searchParams.get('code_challenge_method'), 'S256');
  const pkce = await codeFrom(withPkce.href);
  await rejectsWith(t, client.exchangeCode(pkce.code, REDIRECT, 'w'.repeat(43)), 'refused', /bad_verification_code/);
  const again = await codeFrom(withPkce.href);
  t.match((await client.exchangeCode(again.code, REDIRECT, verifier)).accessToken, /^gho_/);
});

t.test('the primary verified email: unverified and secondary addresses are skipped; not granted = undefined', async (t) => {
  const user: FakeUser = {
    login: 'bob',
    id: 7,
    email: null,
    emails: [
      { email: 'old@example.test', primary: false, verified: true },
      { email: 'bob@example.test', primary: true, verified: false },
    ],
  };
  const fake = await startCodeHostFake({ users: [user] });
  t.teardown(() => fake.close());
  const client = clientFor(fake);
  const token = await login(fake, client, ['user:email']);
  t.equal(await client.primaryVerifiedEmail(token), undefined, 'the primary one is not verified');
  user.emails![1]!.verified = true;
  t.equal(await client.primaryVerifiedEmail(token), 'bob@example.test');
  const without = await login(fake, client, []);
  t.equal(await client.primaryVerifiedEmail(without), undefined, '404 without user:email');
  t.same(await client.user(without), { login: 'bob', id: '7', name: '', email: '', avatarUrl: '' });
});

t.test('lists are read page by page, up to a bound', async (t) => {
  const orgs = Array.from({ length: 250 }, (_, i) => `org-${i}`);
  const fake = await startCodeHostFake({ users: [{ login: 'many', id: 9, orgs, teams: [] }] });
  t.teardown(() => fake.close());
  const client = clientFor(fake);
  const token = await login(fake, client, ['read:org']);
  t.same(await client.organizations(token), orgs);
  t.same(
    fake.requests.filter((r) => r.path === '/user/orgs').map((r) => r.query),
    ['?per_page=100&page=1', '?per_page=100&page=2', '?per_page=100&page=3'],
  );
  fake.users[0]!.orgs = Array.from({ length: 100 * (MAX_PAGES + 2) }, (_, i) => `o${i}`);
  t.equal((await client.organizations(token)).length, 100 * MAX_PAGES, 'stops after MAX_PAGES pages');
});

t.test('GitHub Enterprise: server URL and API under a base path', async (t) => {
  const fake = await startCodeHostFake({ basePath: '/ghe' });
  t.teardown(() => fake.close());
  t.equal(fake.apiUrl, `${fake.url}/ghe/api/v3`);
  const client = clientFor(fake);
  t.ok(client.authorizeUrl({ redirectUri: REDIRECT, scopes: [], state: 's' }).startsWith(`${fake.url}/ghe/login/oauth/authorize?`));
  const token = await login(fake, client, ['read:org']);
  t.equal((await client.user(token)).login, 'alice');
  t.same(
    fake.requests.map((r) => `${r.method} ${r.path}`),
    ['GET /login/oauth/authorize', 'POST /login/oauth/access_token', 'GET /api/v3/user'],
  );
});

t.test('failures: credentials, statuses, timeouts, oversized and malformed answers; no secret in errors', async (t) => {
  const fake = await startCodeHostFake();
  t.teardown(() => fake.close());
  const client = clientFor(fake);

  const wrong = clientFor(fake, { clientSecret: 'not-the-secret' });
  const { code } = await codeFrom(wrong.authorizeUrl({ redirectUri: REDIRECT, scopes: [], state: 's' }));
  noSecretIn(t, fake, await rejectsWith(t, wrong.exchangeCode(code, REDIRECT), 'refused', /\(incorrect_client_credentials\)/));

  const token = await login(fake, client, ['read:org']);
  noSecretIn(t, fake, await rejectsWith(t, client.user('gho_unknown'), 'status', /code host GET \/user: 127\.0\.0\.1:\d+ answered HTTP 401/));

  fake.hook = (r) => (r.route === '/user/teams' ? { status: 500, body: '{"message":"boom"}' } : undefined);
  noSecretIn(t, fake, await rejectsWith(t, client.teams(token), 'status', /answered HTTP 500/));

  fake.hook = (r) => (r.route === '/user' ? { body: 'not json' } : undefined);
  noSecretIn(t, fake, await rejectsWith(t, client.user(token), 'malformed', /not JSON/));

  fake.hook = (r) => (r.route === '/login/oauth/access_token' ? { body: JSON.stringify({ error: `<script>${'x'.repeat(100)}` }) } : undefined);
  const odd = await rejectsWith(t, client.exchangeCode('c', REDIRECT), 'refused', /\(invalid_response\)/);
  t.notMatch(odd.message, /script/, 'an odd error code is not repeated');

  // A redirect is not followed with the token.
  fake.hook = (r) => (r.route === '/user' ? { status: 302, headers: { Location: 'http://127.0.0.1:9/steal' } } : undefined);
  await rejectsWith(t, client.user(token), 'status', /answered HTTP 302/);

  // 1 MiB + 1 byte announced, then streamed without a length.
  const big = 'x'.repeat(1024 * 1024 + 1);
  fake.hook = (r) => (r.route === '/user' ? { body: big } : undefined);
  noSecretIn(t, fake, await rejectsWith(t, client.user(token), 'too-large', /answered more than 1048576 bytes/));
  fake.hook = (r) =>
    r.route === '/user/orgs'
      ? {
          headers: { 'Content-Type': 'application/json' },
          body: (res) => {
            const chunk = '['.padEnd(64 * 1024, ' ');
            let sent = 0;
            const more = () => {
              while (sent < 40) {
                sent++;
                if (!res.write(chunk)) return void res.once('drain', more);
              }
              res.end();
            };
            res.on('error', () => undefined);
            more();
          },
        }
      : undefined;
  await rejectsWith(t, client.organizations(token), 'too-large', /answered more than/);

  const quick = clientFor(fake, { timeoutMs: 200 });
  fake.hook = (r) => (r.route === '/user' ? { delayMs: 2_000 } : undefined);
  noSecretIn(t, fake, await rejectsWith(t, quick.user(token), 'unreachable', /did not answer within 0\.2s/));
  fake.hook = undefined;

  const closed = `http://127.0.0.1:${await freePort()}`;
  const down = createCodeHostClient({ serverUrl: closed, apiUrl: closed, clientId: 'c', clientSecret: SECRET });
  noSecretIn(t, fake, await rejectsWith(t, down.exchangeCode('c', REDIRECT), 'unreachable', /cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/));
});
