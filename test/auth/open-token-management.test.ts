/**
 * The token method with `authentication.required: false` opens token management to anyone: the
 * real `vexil serve` warns about it at start, and says how to close it.
 */
import t from 'tap';
import { startServe, writeServeConfig } from './process.js';
import { request, tempDir } from './support.js';

const WARNING = /^authentication\.methods\.token is enabled while authentication\.required is false: anyone who can reach this server can create, list and delete client tokens/;

const config = (required: boolean) => `data_dir: data
authentication:
  required: ${required}
  methods:
    token:
      enabled: true
`;

t.test('token method without required authentication: a warning at start, and what it warns about holds', async (t) => {
  const dir = tempDir(t);
  const s = await startServe(t, writeServeConfig(dir, config(false)), dir);
  const warning = s.entries().find((e) => typeof e.msg === 'string' && WARNING.test(e.msg));
  t.ok(warning, 'warned at start');
  t.equal(warning?.level, 'warn', 'at warn level');
  t.match(String(warning?.msg), /with a shared PostgreSQL store the tokens created here are accepted by replicas that require authentication/);
  t.match(String(warning?.msg), /set authentication\.required: true .*or disable the token method/, 'says how to fix it');

  // What it warns about: no credential is needed to create, list and delete tokens.
  const created = await request(`${s.url}/auth/v1/method/token`, { body: { name: 'anyone' } });
  t.equal(created.status, 200, 'created without a token');
  const list = await request(`${s.url}/auth/v1/tokens`);
  t.equal(list.status, 200, 'listed without a token');
  const id = (created.body as { authentication: { id: string } }).authentication.id;
  t.equal((await request(`${s.url}/auth/v1/tokens/${id}`, { method: 'DELETE' })).status, 200, 'deleted without a token');
});

t.test('token method with required authentication: no such warning', async (t) => {
  const dir = tempDir(t);
  const s = await startServe(t, writeServeConfig(dir, config(true)), dir);
  t.notOk(
    s.entries().some((e) => typeof e.msg === 'string' && WARNING.test(e.msg)),
    'not warned',
  );
});
