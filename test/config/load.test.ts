import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, loadConfigReport, type LoadConfigOptions } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/errors.js';
import { BUNDLED_EXAMPLES_DIR } from '../../src/config/paths.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The defaults of the live-update stream keys (server.max_streams, ...), in every resolved `server`. */
const STREAM_DEFAULTS = { max_streams: 10000, stream_heartbeat_interval: 15000, stream_inactivity_delay: 120000, stream_buffer_limit: 1048576 };
const CONNECTION_DEFAULTS = { keep_alive_timeout: 65000, headers_timeout: 66000, trusted_proxies: [] };

/** The ConfigError loadConfig throws for these options (fails the test if it does not throw one). */
function configError(t: Test, opts: LoadConfigOptions): ConfigError {
  try {
    loadConfig(opts);
  } catch (err) {
    t.type(err, ConfigError);
    return err as ConfigError;
  }
  t.fail('expected a ConfigError');
  return new ConfigError([]);
}

/** A fresh folder, removed when the test ends. */
function tempDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vexil-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes a config file in a fresh folder; returns its path. */
function configFile(t: Test, yaml: string, name = 'vexil.yml'): string {
  const file = path.join(tempDir(t), name);
  fs.writeFileSync(file, yaml);
  return file;
}

t.test('defaults without a file or environment', async (t) => {
  const c = loadConfig({ env: {} });
  t.same(c.server, { host: '127.0.0.1', http_port: 8080, workers: 1, ...STREAM_DEFAULTS, ...CONNECTION_DEFAULTS });
  t.same(c.log, { level: 'info', encoding: 'json', requests: 'errors' });
  t.equal(c.storage.type, 'local');
  t.equal(c.storage.max_file_size, 8 * 1024 * 1024);
  t.equal(c.storage.local.path, path.join(REPO, 'examples'), 'the bundled examples folder');
  t.equal(c.storage.local.path, BUNDLED_EXAMPLES_DIR);

  const a = c.authentication;
  t.equal(a.required, false);
  t.same(a.exclude, { management: false, evaluation: false, metrics: false });
  t.same(a.session, { secure: false, token_lifetime: 24 * 3600_000, state_lifetime: 10 * 60_000, csrf: { secure: true, trusted_origins: [] } });
  for (const m of ['token', 'oidc', 'code_host', 'cluster'] as const) {
    t.equal(a.methods[m].enabled, false, `${m} disabled`);
    t.same(a.methods[m].cleanup, { interval: 3600_000, grace_period: 1800_000 }, `${m} cleanup defaults`);
  }
  t.same(a.methods.token.bootstrap, {});
  t.same(a.methods.oidc.providers, {});
  t.same(a.methods.oidc.email_matches, []);
  t.same(a.methods.code_host.scopes, []);
  t.same(a.methods.code_host.allowed_organizations, []);
  t.equal(a.methods.cluster.discovery_url, 'https://kubernetes.default.svc.cluster.local');
  t.equal(a.methods.cluster.ca_path, '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt');
  t.equal(a.methods.cluster.service_account_token_path, '/var/run/secrets/kubernetes.io/serviceaccount/token');
  t.same(a.methods.cluster.audiences, [], 'the audience is not checked unless configured');
  t.same(a.methods.jwt, { enabled: false, leeway: 60_000, validate_claims: { audiences: [] } });
});

t.test('defaultLocalPath replaces the bundled folder', async (t) => {
  const c = loadConfig({ env: {}, defaultLocalPath: '/srv/flags' });
  t.equal(c.storage.local.path, '/srv/flags');
});

t.test('values from a file', async (t) => {
  const file = configFile(
    t,
    `
server:
  host: 0.0.0.0
  http_port: 9000
log:
  level: debug
  encoding: console
storage:
  type: local
  max_file_size: 1024
  local:
    path: state
authentication:
  required: true
  session:
    domain: https://flags.example.com:8443/
    token_lifetime: 1h30m
  methods:
    token:
      enabled: true
      cleanup: { interval: 5m }
      bootstrap: { token: s3cr3t, expiration: 24h }
    jwt:
      enabled: true
      public_key_file: /keys/jwt.pem
      validate_claims: { issuer: me, audiences: [svc] }
`,
  );
  const c = loadConfig({ file, env: {} });
  t.same(c.server, { host: '0.0.0.0', http_port: 9000, workers: 1, ...STREAM_DEFAULTS, ...CONNECTION_DEFAULTS });
  t.same(c.log, { level: 'debug', encoding: 'console', requests: 'errors' });
  t.equal(c.storage.max_file_size, 1024);
  t.equal(c.storage.local.path, path.join(path.dirname(file), 'state'), 'relative to the config file');
  t.equal(c.authentication.required, true);
  t.equal(c.authentication.session.domain, 'flags.example.com', 'scheme, port and slash stripped as in Flipt');
  t.equal(c.authentication.session.token_lifetime, 90 * 60_000);
  t.same(c.authentication.methods.token.cleanup, { interval: 5 * 60_000, grace_period: 1800_000 });
  t.same(c.authentication.methods.token.bootstrap, { token: 's3cr3t', expiration: 24 * 3600_000 });
  t.same(c.authentication.methods.jwt, {
    enabled: true,
    public_key_file: '/keys/jwt.pem',
    leeway: 60_000,
    validate_claims: { issuer: 'me', audiences: ['svc'] },
  });
});

t.test('an empty file gives the defaults; an absolute path stays', async (t) => {
  t.same(loadConfig({ file: configFile(t, '# nothing\n'), env: {} }).server, { host: '127.0.0.1', http_port: 8080, workers: 1, ...STREAM_DEFAULTS, ...CONNECTION_DEFAULTS });
  const c = loadConfig({ file: configFile(t, 'storage:\n  local:\n    path: /abs/flags\n'), env: {} });
  t.equal(c.storage.local.path, '/abs/flags');
});

t.test('a relative file path resolves against cwd', async (t) => {
  const dir = tempDir(t);
  fs.mkdirSync(path.join(dir, 'conf'));
  fs.writeFileSync(path.join(dir, 'conf', 'v.yml'), 'storage: { local: { path: ./s } }\n');
  const c = loadConfig({ file: 'conf/v.yml', cwd: dir, env: {} });
  t.equal(c.storage.local.path, path.join(dir, 'conf', 's'));
});

t.test('environment overrides nested keys and keys with underscores', async (t) => {
  const cwd = tempDir(t);
  const c = loadConfig({
    cwd,
    env: {
      VEXIL_SERVER_HOST: '0.0.0.0',
      VEXIL_SERVER_HTTP_PORT: '9090',
      VEXIL_STORAGE_LOCAL_PATH: 'flags',
      VEXIL_STORAGE_MAX_FILE_SIZE: '2048',
      VEXIL_LOG_ENCODING: 'console',
      VEXIL_LOG_REQUESTS: 'all',
      VEXIL_AUTHENTICATION_METHODS_TOKEN_ENABLED: 'true',
      VEXIL_AUTHENTICATION_METHODS_TOKEN_CLEANUP_GRACE_PERIOD: '2h',
      VEXIL_AUTHENTICATION_SESSION_TOKEN_LIFETIME: '48h',
      VEXIL_AUTHENTICATION_METHODS_CLUSTER_SERVICE_ACCOUNT_TOKEN_PATH: '/run/sa/token',
      VEXIL_AUTHENTICATION_METHODS_TOKEN_BOOTSTRAP_TOKEN: 'boot',
      PATH: '/usr/bin',
      HOME: '/root',
    },
  });
  t.same(c.server, { host: '0.0.0.0', http_port: 9090, workers: 1, ...STREAM_DEFAULTS, ...CONNECTION_DEFAULTS });
  t.equal(c.storage.local.path, path.join(cwd, 'flags'), 'relative to cwd when set from the environment');
  t.equal(c.storage.max_file_size, 2048);
  t.equal(c.log.encoding, 'console');
  t.equal(c.log.requests, 'all');
  t.equal(c.authentication.methods.token.enabled, true);
  t.equal(c.authentication.methods.token.cleanup.grace_period, 2 * 3600_000);
  t.equal(c.authentication.methods.token.bootstrap.token, 'boot');
  t.equal(c.authentication.session.token_lifetime, 48 * 3600_000);
  t.equal(c.authentication.methods.cluster.service_account_token_path, '/run/sa/token');
});

t.test('environment beats the file; the file path of an overridden key no longer applies', async (t) => {
  const file = configFile(t, 'server: { http_port: 1111 }\nstorage: { local: { path: from-file } }\n');
  const cwd = tempDir(t);
  const c = loadConfig({ file, cwd, env: { VEXIL_SERVER_HTTP_PORT: '2222', VEXIL_STORAGE_LOCAL_PATH: 'from-env' } });
  t.equal(c.server.http_port, 2222);
  t.equal(c.storage.local.path, path.join(cwd, 'from-env'));
});

t.test('an empty variable is ignored, as in Flipt', async (t) => {
  const c = loadConfig({ env: { VEXIL_SERVER_HOST: '', VEXIL_SERVER_BOGUS: '' } });
  t.equal(c.server.host, '127.0.0.1');
});

t.test('type conversion of environment values', async (t) => {
  for (const [text, want] of [
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ] as const) {
    const c = loadConfig({ env: { VEXIL_AUTHENTICATION_REQUIRED: text } });
    t.equal(c.authentication.required, want, `boolean from ${text}`);
  }
  const lists = loadConfig({
    env: {
      VEXIL_AUTHENTICATION_METHODS_CODE_HOST_SCOPES: 'user:email, read:org',
      VEXIL_AUTHENTICATION_METHODS_CODE_HOST_ALLOWED_ORGANIZATIONS: '["acme","widgets"]',
      VEXIL_AUTHENTICATION_METHODS_JWT_VALIDATE_CLAIMS_AUDIENCES: 'one',
    },
  });
  t.same(lists.authentication.methods.code_host.scopes, ['user:email', 'read:org'], 'comma-separated');
  t.same(lists.authentication.methods.code_host.allowed_organizations, ['acme', 'widgets'], 'JSON array');
  t.same(lists.authentication.methods.jwt.validate_claims.audiences, ['one']);
});

t.test('a map from a JSON object, and map entries by name', async (t) => {
  const provider = {
    issuer_url: 'https://id.example.com',
    client_id: 'cid',
    client_secret: 'sec',
    redirect_address: 'https://flags.example.com',
  };
  const c = loadConfig({
    env: {
      VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS: JSON.stringify({ google: provider }),
      VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_GOOGLE_CLIENT_ID: 'override',
      VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_GOOGLE_USE_PKCE: 'true',
    },
  });
  t.same(c.authentication.methods.oidc.providers, {
    google: { ...provider, client_id: 'override', scopes: [], use_pkce: true },
  });

  const file = configFile(
    t,
    `authentication:
  methods:
    oidc:
      providers:
        My_Corp:
          issuer_url: https://id.example.com
          client_id: cid
          client_secret: sec
          redirect_address: https://flags.example.com
`,
  );
  const d = loadConfig({ file, env: { VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_MY_CORP_SCOPES: 'email,profile' } });
  t.same(d.authentication.methods.oidc.providers.My_Corp!.scopes, ['email', 'profile'], 'existing entry found ignoring case');
  t.same(Object.keys(d.authentication.methods.oidc.providers), ['My_Corp']);

  const e = configError(t, {
    env: { VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_NEW_ONE_CLIENT_ID: 'x' },
  });
  t.match(e.message, /authentication\.methods\.oidc\.providers\.new_one\.issuer_url: required/);
  t.match(e.message, /authentication\.methods\.oidc\.providers\.new_one\.client_secret: required/);

  const bad = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS: 'not json' } });
  t.match(bad.message, /authentication\.methods\.oidc\.providers: expected a JSON object \(got "not json"\) from VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS/);
});

t.test('unknown keys in the file are refused with their path', async (t) => {
  const file = configFile(t, 'server:\n  http_port: 8080\nstorage:\n  locl:\n    path: x\n');
  const e = configError(t, { file, env: {} });
  t.equal(e.problems.length, 1);
  t.equal(e.problems[0]!.path, 'storage.locl');
  t.match(e.message, `storage.locl: unknown key (at ${file}:4:3) (did you mean "local"?)`);

  const flipt = configError(t, { file: configFile(t, 'authentication:\n  methods:\n    github:\n      enabled: true\n'), env: {} });
  t.match(flipt.message, 'authentication.methods.github: unknown key');
  t.match(flipt.message, 'vexil calls this method "code_host"');

  const top = configError(t, { file: configFile(t, 'cache:\n  enabled: true\n'), env: {} });
  t.match(top.message, /^invalid configuration: cache: unknown key/);
});

/** The service-link variables Kubernetes gives every pod for a Service `vexil` with a port named http. */
const SERVICE_LINKS = {
  VEXIL_PORT: 'tcp://10.0.0.1:8080',
  VEXIL_PORT_8080_TCP: 'tcp://10.0.0.1:8080',
  VEXIL_PORT_8080_TCP_PROTO: 'tcp',
  VEXIL_PORT_8080_TCP_PORT: '8080',
  VEXIL_PORT_8080_TCP_ADDR: '10.0.0.1',
  VEXIL_SERVICE_HOST: '10.0.0.1',
  VEXIL_SERVICE_PORT: '8080',
  VEXIL_SERVICE_PORT_HTTP: '8080',
};

t.test('environment: a variable that names no key is ignored and reported by name', async (t) => {
  const r = loadConfigReport({ env: { ...SERVICE_LINKS, VEXIL_SERVER_HTTP_PORT: '9000' } });
  t.equal(r.config.server.http_port, 9000, 'the variable that names a key is applied');
  t.same(
    r.ignoredVariables.map((i) => i.variable),
    Object.keys(SERVICE_LINKS).sort(),
    'every service-link variable ignored, in name order',
  );
  t.same(loadConfig({ env: SERVICE_LINKS }), loadConfig({ env: {} }), 'ignored variables change nothing');
  t.notOk(JSON.stringify(r.ignoredVariables).includes('10.0.0.1'), 'values are not carried');

  // Partial matches: a known key followed by words that are not a key below it, or a known key's
  // name run on into other words, names no key.
  const partial = loadConfigReport({
    env: {
      VEXIL_SERVER_FOO: 'x',
      VEXIL_SERVER_HTTP_PORT_EXTRA: '1',
      VEXIL_SERVERS: 'x',
      VEXIL_STORAGE_LOCAL_PATH_X: 'y',
      VEXIL_LOG_LEVEL_: 'debug',
      VEXIL_: 'x',
      VEXIL_WORKER_SLOT: '3',
      VEXIL_EMPTY_AND_UNKNOWN: '',
    },
    ignoreEnv: ['VEXIL_WORKER_SLOT'],
  });
  t.same(
    partial.ignoredVariables.map((i) => i.variable),
    ['VEXIL_', 'VEXIL_EMPTY_AND_UNKNOWN', 'VEXIL_LOG_LEVEL_', 'VEXIL_SERVERS', 'VEXIL_SERVER_FOO', 'VEXIL_SERVER_HTTP_PORT_EXTRA', 'VEXIL_STORAGE_LOCAL_PATH_X'],
    'a variable vexil reads itself (ignoreEnv) is not reported',
  );
  t.same(partial.config, loadConfig({ env: {} }));

  // A misspelt key is ignored too (the environment is not ours to police); the report names the
  // variable that would have been read, when there is one.
  const typos = loadConfigReport({
    env: { VEXIL_STORAGE_OCI_REPOSITRY: 'https://x', VEXIL_SERVER_HTTP_PROT: '1', VEXIL_AUTHENTICATION_METHODS_GITHUB_ENABLED: 'true' },
  });
  t.same(typos.ignoredVariables, [
    { variable: 'VEXIL_AUTHENTICATION_METHODS_GITHUB_ENABLED', didYouMean: 'VEXIL_AUTHENTICATION_METHODS_CODE_HOST_ENABLED' },
    { variable: 'VEXIL_SERVER_HTTP_PROT', didYouMean: 'VEXIL_SERVER_HTTP_PORT' },
    { variable: 'VEXIL_STORAGE_OCI_REPOSITRY', didYouMean: 'VEXIL_STORAGE_OCI_REPOSITORY' },
  ]);
});

t.test('environment: a variable that names a key is still checked, naming the variable', async (t) => {
  const port = configError(t, { env: { ...SERVICE_LINKS, VEXIL_SERVER_HTTP_PORT: 'tcp://10.0.0.1:8080' } });
  t.equal(port.problems.length, 1, 'only the known key is a problem');
  t.match(port.message, /server\.http_port: must be an integer .*from VEXIL_SERVER_HTTP_PORT/);
  // A key that holds other keys is a key too: its variable takes a JSON object.
  const section = configError(t, { env: { VEXIL_SERVER: 'tcp://10.0.0.1:8080' } });
  t.match(section.message, /server: expected a JSON object .*from VEXIL_SERVER/);
  const flag = configError(t, { env: { VEXIL_AUTHENTICATION_REQUIRED: 'maybe' } });
  t.match(flag.message, /authentication\.required: must be a boolean .*from VEXIL_AUTHENTICATION_REQUIRED/);
});

t.test('the OCI and object-store keys map from the environment with their defaults', async (t) => {
  const c = loadConfig({
    env: {
      VEXIL_STORAGE_OCI_REPOSITORY: '127.0.0.1:5000/team/flags:v1',
      VEXIL_STORAGE_OCI_POLL_INTERVAL: '5s',
      VEXIL_STORAGE_OBJECT_TYPE: 's3',
      VEXIL_STORAGE_OBJECT_S3_BUCKET: 'flags',
      VEXIL_STORAGE_OBJECT_S3_PREFIX: 'prod/',
    },
  });
  t.same(c.storage.oci, {
    repository: '127.0.0.1:5000/team/flags:v1',
    insecure: false,
    authentication: {},
    poll_interval: 5000,
    manifest_version: '1.1',
    max_staleness: 300000,
  });
  t.same(c.storage.object, {
    type: 's3',
    s3: { bucket: 'flags', prefix: 'prod/', poll_interval: 60000, max_staleness: 300000 },
    azblob: { prefix: '', poll_interval: 60000, max_staleness: 300000 },
    googlecloud: { prefix: '', endpoint: 'https://storage.googleapis.com', hmac: {}, poll_interval: 60000, max_staleness: 300000 },
  });
  const bad = configError(t, { env: { VEXIL_STORAGE_OCI_MANIFEST_VERSION: '2.0' } });
  t.match(bad.message, 'storage.oci.manifest_version');
});

t.test('ignoreEnv skips variables the caller reads itself', async (t) => {
  const c = loadConfigReport({ env: { VEXIL_CONFIG: '/etc/vexil.yml' }, ignoreEnv: ['VEXIL_CONFIG'] });
  t.equal(c.config.server.http_port, 8080);
  t.same(c.ignoredVariables, [], 'not reported as ignored');
  t.same(loadConfigReport({ env: { VEXIL_CONFIG: '/etc/vexil.yml' } }).ignoredVariables, [{ variable: 'VEXIL_CONFIG' }], 'otherwise reported as ignored');
});

t.test('wrong types and ranges', async (t) => {
  const env = configError(t, { env: { VEXIL_SERVER_HTTP_PORT: 'abc' } });
  t.equal(env.message, 'invalid configuration: server.http_port: must be an integer (got "abc" from VEXIL_SERVER_HTTP_PORT)');

  const file = configFile(
    t,
    `server:
  http_port: "8080"
  host: [a]
log:
  level: verbose
storage:
  max_file_size: 8MiB
  type: svn
authentication:
  required: yes
  methods:
    oidc:
      email_matches: nope
`,
  );
  const e = configError(t, { file, env: {} });
  const byPath = Object.fromEntries(e.problems.map((p) => [p.path, p.message]));
  t.equal(byPath['server.http_port'], `must be an integer (got "8080" at ${file}:2:14)`);
  t.equal(byPath['server.host'], `must be a string (got ["a"] at ${file}:3:9)`);
  t.equal(byPath['log.level'], `must be one of trace, debug, info, warn, error, fatal (got "verbose" at ${file}:5:10)`);
  t.match(byPath['storage.max_file_size'], /^must be an integer \(got "8MiB"/);
  t.match(byPath['storage.type'], /^must be one of local, git, oci, object \(got "svn"/);
  t.match(byPath['authentication.required'], /^must be a boolean \(got "yes"/, 'YAML 1.2: yes is a string');
  t.match(byPath['authentication.methods.oidc.email_matches'], /^must be a list \(array\)/);
  t.equal(e.problems.length, 7, 'every problem is reported, not just the first');

  const range = configError(t, { env: { VEXIL_SERVER_HTTP_PORT: '70000', VEXIL_STORAGE_MAX_FILE_SIZE: '0' } });
  t.match(range.message, 'server.http_port: must be <= 65535 (got 70000 from VEXIL_SERVER_HTTP_PORT)');
  t.match(range.message, 'storage.max_file_size: must be >= 1 (got 0 from VEXIL_STORAGE_MAX_FILE_SIZE)');

  const bool = configError(t, { env: { VEXIL_AUTHENTICATION_REQUIRED: 'yes' } });
  t.match(bool.message, 'authentication.required: must be a boolean (got "yes" from VEXIL_AUTHENTICATION_REQUIRED)');

  const url = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_JWT_JWKS_URL: 'not a url' } });
  t.match(url.message, 'authentication.methods.jwt.jwks_url: must be an absolute URL');
});

t.test('storage types of later backends pass the schema (serve refuses them)', async (t) => {
  for (const type of ['git', 'oci', 'object'] as const) {
    t.equal(loadConfig({ env: { VEXIL_STORAGE_TYPE: type } }).storage.type, type);
  }
});

t.test('bad durations', async (t) => {
  const file = configFile(
    t,
    `authentication:
  methods:
    token:
      cleanup:
        interval: 5 minutes
        grace_period: 30
  session:
    state_lifetime: -1m
`,
  );
  const e = configError(t, { file, env: {} });
  const byPath = Object.fromEntries(e.problems.map((p) => [p.path, p.message]));
  t.equal(
    byPath['authentication.methods.token.cleanup.interval'],
    `invalid duration "5 minutes" (expected e.g. 30s, 1m30s, 24h) (at ${file}:5:19)`,
  );
  t.match(byPath['authentication.methods.token.cleanup.grace_period'], /^invalid duration 30 \(expected a string such as 30s/);
  t.match(byPath['authentication.session.state_lifetime'], /invalid duration "-1m": must not be negative/);

  const env = configError(t, { env: { VEXIL_AUTHENTICATION_SESSION_TOKEN_LIFETIME: '1d' } });
  t.match(env.message, /authentication\.session\.token_lifetime: invalid duration "1d": unknown unit "d".*\(from VEXIL_AUTHENTICATION_SESSION_TOKEN_LIFETIME\)/);
});

t.test('${VAR} placeholders are replaced from the environment, typed by the schema', async (t) => {
  const file = configFile(
    t,
    `server:
  http_port: \${HTTP_PORT}
log:
  encoding: \${LOG_FORMAT}
authentication:
  required: \${AUTH_ON}
  methods:
    code_host:
      client_secret: \${GH_SECRET}
      client_id: prefix-\${NOT_WHOLE}
      scopes: \${SCOPES}
`,
  );
  const c = loadConfig({
    file,
    env: { HTTP_PORT: '9001', LOG_FORMAT: 'console', AUTH_ON: 'true', GH_SECRET: 'shh', SCOPES: 'a,b' },
  });
  t.equal(c.server.http_port, 9001);
  t.equal(c.log.encoding, 'console');
  t.equal(c.authentication.required, true);
  t.equal(c.authentication.methods.code_host.client_secret, 'shh');
  t.equal(c.authentication.methods.code_host.client_id, 'prefix-${NOT_WHOLE}', 'only whole values are placeholders, as in Flipt');
  t.same(c.authentication.methods.code_host.scopes, ['a', 'b']);

  const unset = configError(t, { file, env: { HTTP_PORT: 'x', LOG_FORMAT: 'console', AUTH_ON: 'true', SCOPES: 'a' } });
  t.match(
    unset.message,
    `authentication.methods.code_host.client_secret: environment variable GH_SECRET is not set (referenced as \${GH_SECRET} at ${file}:9:22)`,
  );
  t.match(unset.message, `server.http_port: must be an integer (got "x" from \${HTTP_PORT} at ${file}:2:14)`);
});

t.test('rules across keys', async (t) => {
  const domain = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_CODE_HOST_ENABLED: 'true' } });
  t.match(domain.message, 'authentication.session.domain: required when a session-compatible method is enabled (code_host)');
  t.match(domain.message, 'authentication.methods.code_host.client_id: required when code_host is enabled');
  t.match(domain.message, 'authentication.methods.code_host.client_secret: required when code_host is enabled');

  const oidcOn = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_OIDC_ENABLED: '1' } });
  t.match(oidcOn.message, /session\.domain: required when a session-compatible method is enabled \(oidc\)/);
  t.ok(
    loadConfig({ env: { VEXIL_AUTHENTICATION_METHODS_OIDC_ENABLED: '1', VEXIL_AUTHENTICATION_SESSION_DOMAIN: 'x.test' } }),
    'domain set: accepted',
  );

  const jwtNone = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_JWT_ENABLED: 'true' } });
  t.match(jwtNone.message, 'authentication.methods.jwt: one of jwks_url or public_key_file is required when jwt is enabled');
  const jwtBoth = configError(t, {
    env: {
      VEXIL_AUTHENTICATION_METHODS_JWT_ENABLED: 'true',
      VEXIL_AUTHENTICATION_METHODS_JWT_JWKS_URL: 'https://id.example.com/jwks',
      VEXIL_AUTHENTICATION_METHODS_JWT_PUBLIC_KEY_FILE: '/k.pem',
    },
  });
  t.match(jwtBoth.message, 'authentication.methods.jwt: only one of jwks_url or public_key_file can be set');
  t.ok(loadConfig({ env: { VEXIL_AUTHENTICATION_METHODS_JWT_PUBLIC_KEY_FILE: '/k.pem', VEXIL_AUTHENTICATION_METHODS_JWT_JWKS_URL: 'https://x.test/j' } }), 'disabled jwt: not checked');

  const zero = configError(t, {
    env: { VEXIL_AUTHENTICATION_METHODS_CLUSTER_CLEANUP_INTERVAL: '0s', VEXIL_AUTHENTICATION_SESSION_STATE_LIFETIME: '0' },
  });
  t.match(zero.message, 'authentication.methods.cluster.cleanup.interval: must be a positive duration');
  t.match(zero.message, 'authentication.session.state_lifetime: must be a positive duration');

  const org = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_CODE_HOST_ALLOWED_ORGANIZATIONS: 'acme' } });
  t.match(org.message, 'authentication.methods.code_host.scopes: must contain read:org when allowed_organizations is not empty');

  const regex = configError(t, { env: { VEXIL_AUTHENTICATION_METHODS_OIDC_EMAIL_MATCHES: '["(unclosed"]' } });
  t.match(regex.message, 'authentication.methods.oidc.email_matches.0: invalid regular expression');
});

t.test('problems of the file as a whole', async (t) => {
  const missing = configError(t, { file: '/nonexistent/vexil.yml', env: {} });
  t.equal(missing.message, 'invalid configuration: cannot read config file /nonexistent/vexil.yml: no such file');

  const file = configFile(t, 'server:\n  host: a\n  host: b\nlog: [unclosed\n');
  const syntax = configError(t, { file, env: {} });
  t.match(syntax.message, `${file}:3:3: invalid YAML`);
  t.ok(syntax.problems.every((p) => p.path === ''));

  const list = configError(t, { file: configFile(t, '- a\n- b\n'), env: {} });
  t.match(list.message, 'the top level must be a mapping');
});

t.test('every example config loads', async (t) => {
  const dir = path.join(REPO, 'examples', 'config');
  const local = loadConfig({ file: path.join(dir, 'local.yml'), env: {} });
  t.equal(local.storage.local.path, BUNDLED_EXAMPLES_DIR, 'local.yml serves examples/');
  t.same(local, loadConfig({ env: {} }), 'local.yml spells out the defaults');

  const consoleLog = loadConfig({ file: path.join(dir, 'console-log.yml'), env: {} });
  t.same(consoleLog.log, { level: 'debug', encoding: 'console', requests: 'all' });

  const secrets = { CSRF_KEY: 'k'.repeat(32), BOOTSTRAP_TOKEN: 'boot', OIDC_CLIENT_SECRET: 'o', CODE_HOST_CLIENT_SECRET: 'c' };
  const auth = loadConfig({ file: path.join(dir, 'authentication.yml'), env: secrets });
  t.equal(auth.authentication.required, true);
  t.equal(auth.authentication.session.csrf.key, secrets.CSRF_KEY);
  t.equal(auth.authentication.methods.token.bootstrap.token, 'boot');
  t.equal(auth.authentication.methods.oidc.providers.corp!.client_secret, 'o');
  t.ok(new RegExp(auth.authentication.methods.oidc.email_matches[0]!).test('ann@example.com'));
  t.equal(auth.authentication.methods.code_host.client_secret, 'c');
  t.equal(auth.authentication.methods.jwt.jwks_url, 'https://login.example.com/.well-known/jwks.json');

  t.throws(() => loadConfig({ file: path.join(dir, 'authentication.yml'), env: {} }), /CSRF_KEY is not set/);
});
