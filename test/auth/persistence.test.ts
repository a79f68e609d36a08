/**
 * SQLite persistence with real `vexil serve` processes: tokens created survive a restart and a
 * kill -9 between requests; tokens deleted stay deleted; the bootstrap token is made only once;
 * and nothing but the bootstrap token's one line ever shows a raw token in the process output.
 */
import t from 'tap';
import { request } from './support.js';
import { startServe, writeServeConfig } from './process.js';
import { tempDir } from './support.js';

const YAML = `
authentication:
  required: true
  methods:
    token:
      enabled: true
`;

t.test('restart and kill -9: nothing created is lost, nothing deleted comes back', async (t) => {
  const dir = tempDir(t);
  const config = writeServeConfig(dir, `data_dir: data\n${YAML}`);
  const output: string[] = [];

  const a = await startServe(t, config, dir);
  const boot = String((await a.waitForLog((e) => e.msg === 'access token created')).client_token);
  const url = (s: { url: string }) => `${s.url}/api/v1/namespaces`;

  const keep: string[] = [];
  const gone: Array<{ token: string; id: string }> = [];
  for (let i = 0; i < 3; i++) {
    const res = await request(`${a.url}/auth/v1/method/token`, { token: boot, body: { name: `keep-${i}` } });
    t.equal(res.status, 200);
    keep.push(res.body.clientToken);
    const del = await request(`${a.url}/auth/v1/method/token`, { token: boot, body: { name: `gone-${i}` } });
    gone.push({ token: del.body.clientToken, id: del.body.authentication.id });
  }
  for (const g of gone) t.equal((await request(`${a.url}/auth/v1/tokens/${g.id}`, { token: boot, method: 'DELETE' })).status, 200);
  // Created and deleted right before the kill: the 200s were sent, so both must hold.
  const last = await request(`${a.url}/auth/v1/method/token`, { token: boot, body: { name: 'last' } });
  keep.push(last.body.clientToken);
  t.equal(await a.stop('SIGKILL'), null, 'killed by SIGKILL');
  output.push(...a.lines, a.stderr());

  const b = await startServe(t, config, dir);
  t.notOk(b.entries().some((e) => e.msg === 'access token created'), 'no second bootstrap token');
  for (const [i, token] of keep.entries()) t.equal((await request(url(b), { token })).status, 200, `kept token ${i} works after kill -9`);
  for (const [i, g] of gone.entries()) t.equal((await request(url(b), { token: g.token })).status, 401, `deleted token ${i} stays deleted`);
  t.equal((await request(url(b), { token: boot })).status, 200);
  const list = await request(`${b.url}/auth/v1/tokens`, { token: boot });
  t.same(
    (list.body.authentications as Array<{ metadata: Record<string, string> }>).map((x) => x.metadata['io.svc.auth.token.name']),
    ['initial_bootstrap_token', 'keep-0', 'keep-1', 'keep-2', 'last'],
  );

  // Delete after the restart, then a clean stop and start.
  const victim = (list.body.authentications as Array<{ id: string }>)[1]!.id;
  await request(`${b.url}/auth/v1/tokens/${victim}`, { token: boot, method: 'DELETE' });
  t.equal(await b.stop('SIGTERM'), 0, 'clean stop');
  output.push(...b.lines, b.stderr());

  const c = await startServe(t, config, dir);
  t.equal((await request(url(c), { token: keep[0]! })).status, 401, 'deleted before a clean restart');
  t.equal((await request(url(c), { token: keep[1]! })).status, 200);
  await c.stop('SIGKILL');
  output.push(...c.lines, c.stderr());

  const text = output.join('\n');
  for (const [i, token] of [...keep, ...gone.map((g) => g.token)].entries()) t.notOk(text.includes(token), `token ${i} never logged`);
  t.equal(text.split(boot).length - 1, 1, 'bootstrap token logged once across three starts');
});

t.test('an unusable store stops the start with a clear message', async (t) => {
  const dir = tempDir(t);
  const { writeFileSync, mkdirSync } = await import('node:fs');
  mkdirSync(`${dir}/data`);
  writeFileSync(`${dir}/data/auth.db`, 'not a database '.repeat(100));
  const config = writeServeConfig(dir, `data_dir: data\n${YAML}`);
  const { runCli } = await import('../cli/run-cli.js');
  const res = await runCli(['serve', '--config', config], { cwd: dir });
  t.equal(res.code, 1);
  t.match(res.stderr, /^vexil: cannot open the authentication database .*auth\.db: file is not a database/m);

  const pgConfig = writeServeConfig(dir, 'authentication:\n  required: true\n  storage:\n    type: postgres\n', 'pg.yml');
  const pg = await runCli(['serve', '--config', pgConfig], { cwd: dir });
  t.equal(pg.code, 1);
  t.match(pg.stderr, 'vexil: authentication.storage.postgres.url: required when authentication.storage.type is postgres');
});
