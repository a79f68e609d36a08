/**
 * `environments` (Flipt v2's environment names → references): read from the file and from
 * VEXIL_ENVIRONMENTS_<NAME>_REFERENCE like every other key, checked by the schema.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';

function configFile(t: { teardown(fn: () => void): void }, yaml: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vexil-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'vexil.yml');
  fs.writeFileSync(file, yaml);
  return file;
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return 'not refused';
}

t.test('default: none', async (t) => {
  t.same(loadConfig({ env: {} }).environments, {});
});

t.test('from the file and the environment', async (t) => {
  const file = configFile(t, 'environments:\n  staging:\n    reference: release\n  Production:\n    reference: main\n');
  t.same(loadConfig({ file, env: {} }).environments, { staging: { reference: 'release' }, Production: { reference: 'main' } });
  const c = loadConfig({ file, env: { VEXIL_ENVIRONMENTS_STAGING_REFERENCE: 'hotfix', VEXIL_ENVIRONMENTS_PREVIEW_42_REFERENCE: 'pr-42', VEXIL_ENVIRONMENTS_PRODUCTION_REFERENCE: 'v2' } });
  t.same(c.environments, { staging: { reference: 'hotfix' }, Production: { reference: 'v2' }, preview_42: { reference: 'pr-42' } }, 'an existing entry is found ignoring case; a new one is named in lower case');
});

t.test('refused with the key path', async (t) => {
  t.match(refusal(() => loadConfig({ file: configFile(t, 'environments:\n  staging:\n    ref: main\n'), env: {} })), /environments\.staging/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'environments:\n  staging: {}\n'), env: {} })), /environments\.staging\.reference: required/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'environments:\n  staging:\n    reference: ""\n'), env: {} })), /environments\.staging\.reference/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'environments: [main]\n'), env: {} })), /environments/);
});
