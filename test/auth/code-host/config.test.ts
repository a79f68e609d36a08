/**
 * The code-host config keys: defaults, Flipt's name `github` (refused with a hint), and the rules checked
 * at start (`vexil serve` exits 1 naming the key).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfig } from '../../../src/config/load.js';
import { runCli } from '../../cli/run-cli.js';
import { tempDir } from '../support.js';
import { writeServeConfig } from '../process.js';

function problemsOf(yaml: string, dir: string): string {
  const file = join(dir, 'c.yml');
  writeFileSync(file, yaml);
  try {
    loadConfig({ file, cwd: dir, env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return '';
}

t.test('defaults, Enterprise URLs and teams; Flipt\'s key name is refused with a hint', async (t) => {
  const c = loadConfig({ env: {} }).authentication.methods.code_host;
  t.equal(c.server_url, 'https://github.com');
  t.equal(c.api_url, 'https://api.github.com');
  t.same(c.allowed_teams, {});
  t.equal(c.use_pkce, true);
  const dir = tempDir(t);
  const file = join(dir, 'c.yml');
  writeFileSync(
    file,
    `authentication:
  session: { domain: flags.example.test }
  methods:
    code_host:
      enabled: true
      client_id: cid
      client_secret: sec
      redirect_address: https://flags.example.test
      scopes: [read:org]
      allowed_organizations: [acme, widgets]
      allowed_teams: { acme: [flag-admins] }
      server_url: https://ghe.example.test
      api_url: https://ghe.example.test/api/v3
`,
  );
  const g = loadConfig({ file, cwd: dir, env: {} }).authentication.methods.code_host;
  t.same(
    { teams: g.allowed_teams, server: g.server_url, api: g.api_url },
    { teams: { acme: ['flag-admins'] }, server: 'https://ghe.example.test', api: 'https://ghe.example.test/api/v3' },
  );
  t.match(problemsOf('authentication:\n  methods:\n    github: { enabled: false }\n', dir), 'vexil calls this method "code_host"');
});

t.test('rules: read:org with allowed_organizations; teams only of allowed organizations', async (t) => {
  const dir = tempDir(t);
  const base = `authentication:\n  methods:\n    code_host:\n`;
  t.match(
    problemsOf(`${base}      allowed_organizations: [acme]\n      scopes: [user:email]\n`, dir),
    'authentication.methods.code_host.scopes: must contain read:org when allowed_organizations is not empty',
  );
  t.match(
    problemsOf(`${base}      allowed_organizations: [acme]\n      scopes: [read:org]\n      allowed_teams: { Acme: [a], other: [b] }\n`, dir),
    /authentication\.methods\.code_host\.allowed_teams\.other: the organization 'other' was not declared in 'allowed_organizations'/,
  );
  t.notMatch(
    problemsOf(`${base}      allowed_organizations: [acme]\n      scopes: [read:org]\n      allowed_teams: { Acme: [a], other: [b] }\n`, dir),
    /allowed_teams\.Acme/,
    'organization names compare case-insensitively',
  );
  t.match(problemsOf(`${base}      server_url: not a url\n`, dir), 'authentication.methods.code_host.server_url');
});

t.test('vexil serve refuses to start without read:org, naming the key', async (t) => {
  const dir = tempDir(t);
  const file = writeServeConfig(
    dir,
    `authentication:
  session: { domain: 127.0.0.1 }
  methods:
    code_host:
      enabled: true
      client_id: cid
      client_secret: code-host-client-secret
      redirect_address: http://127.0.0.1:1
      allowed_organizations: [acme]
`,
  );
  const run = await runCli(['serve', '--config', file], { cwd: dir });
  t.equal(run.code, 1);
  t.match(run.stderr, 'authentication.methods.code_host.scopes: must contain read:org when allowed_organizations is not empty');
  t.notMatch(run.stdout + run.stderr, 'code-host-client-secret', 'the secret is not repeated');
});
