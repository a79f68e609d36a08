/**
 * `webhooks.*`: each secret from the file, a `VEXIL_WEBHOOKS_...` variable or a `*_file` path
 * (resolved against the config file's folder, or the working folder when from the environment),
 * never both ways at once; the registry hook only with the OCI backend. Then the secrets as the
 * server reads them (src/server/hooks/secrets.ts): a file's trailing newline is not part of the
 * secret, an unreadable or empty file stops the start naming the key and path, never a content.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { readWebhookSecrets } from '../../src/server/hooks/secrets.js';

function tempDir(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vexil-webhooks-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('off by default: no secret, no hook', async (t) => {
  const c = loadConfig({ env: {} });
  t.same(c.webhooks, { github: {}, gitlab: {}, gitea: {}, generic: {}, registry: {} });
  t.same(readWebhookSecrets(c.webhooks), {});
});

t.test('inline, from the environment, and from files', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'gitea.secret'), 'from a file\n');
  fs.mkdirSync(path.join(dir, 'cwd'));
  fs.writeFileSync(path.join(dir, 'cwd', 'generic.secret'), '  spaced  \n');
  const file = path.join(dir, 'vexil.yml');
  fs.writeFileSync(file, ['webhooks:', '  github: { secret: "inline secret" }', '  gitea: { secret_file: gitea.secret }', ''].join('\n'));
  const c = loadConfig({
    file,
    cwd: path.join(dir, 'cwd'),
    env: { VEXIL_WEBHOOKS_GITLAB_TOKEN: 'gl-token', VEXIL_WEBHOOKS_GENERIC_SECRET_FILE: 'generic.secret' },
  });
  t.equal(c.webhooks.gitea.secret_file, path.join(dir, 'gitea.secret'), 'relative to the config file');
  t.equal(c.webhooks.generic.secret_file, path.join(dir, 'cwd', 'generic.secret'), 'relative to the working folder when from the environment');
  const secrets = readWebhookSecrets(c.webhooks);
  t.same(
    Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, v.toString('utf8')])),
    { github: 'inline secret', gitlab: 'gl-token', gitea: 'from a file', generic: 'spaced' },
  );
});

t.test('refused: both ways at once, an empty secret, the registry hook without the OCI backend', async (t) => {
  const both = (() => {
    try {
      loadConfig({ env: { VEXIL_WEBHOOKS_GITHUB_SECRET: 'hunter2-github', VEXIL_WEBHOOKS_GITHUB_SECRET_FILE: '/run/secrets/github' } });
    } catch (err) {
      return err;
    }
    return undefined;
  })();
  t.type(both, ConfigError);
  t.match((both as Error).message, 'webhooks.github: only one of secret and secret_file can be set');
  t.notMatch((both as Error).message, 'hunter2', 'the secret is not echoed');

  const dir = tempDir(t);
  const file = path.join(dir, 'vexil.yml');
  fs.writeFileSync(file, 'webhooks:\n  gitlab: { token: "" }\n');
  t.throws(() => loadConfig({ file, env: {} }), { message: /webhooks\.gitlab\.token: must not be empty/ });

  t.throws(() => loadConfig({ env: { VEXIL_WEBHOOKS_REGISTRY_TOKEN: 't' } }), {
    message: /webhooks\.registry: needs storage\.type oci/,
  });
  t.ok(
    loadConfig({ env: { VEXIL_WEBHOOKS_REGISTRY_TOKEN: 't', VEXIL_STORAGE_TYPE: 'oci', VEXIL_STORAGE_OCI_REPOSITORY: 'registry.test/team/flags:v1' } }),
    'with the OCI backend: accepted',
  );
});

t.test('a secret file that cannot be read or is empty stops the start with the key and the path', async (t) => {
  const dir = tempDir(t);
  const missing = path.join(dir, 'missing.secret');
  t.throws(() => readWebhookSecrets({ github: { secret_file: missing }, gitlab: {}, gitea: {}, generic: {}, registry: {} }), {
    message: `webhooks.github.secret_file: cannot read ${missing}: ENOENT`,
  });
  const empty = path.join(dir, 'empty.secret');
  fs.writeFileSync(empty, '\n');
  t.throws(() => readWebhookSecrets({ github: {}, gitlab: { token_file: empty }, gitea: {}, generic: {}, registry: {} }), {
    message: `webhooks.gitlab.token_file: ${empty} is empty`,
  });
});
