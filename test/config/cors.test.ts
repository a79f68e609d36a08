/**
 * `cors.*` (Flipt's keys): defaults, the file and VEXIL_CORS_* (a comma-separated list), and the
 * origin syntax refused at start with the entry's path (src/http/origins.ts).
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

t.test('defaults: off; every origin once on (as Flipt); no extra headers', async (t) => {
  t.same(loadConfig({ env: {} }).cors, { enabled: false, allowed_origins: ['*'], allowed_headers: [] });
});

t.test('from the file and the environment', async (t) => {
  const file = configFile(t, 'cors:\n  enabled: true\n  allowed_origins:\n    - https://app.example.com\n    - https://*.preview.example.com\n  allowed_headers: [X-Trace]\n');
  t.same(loadConfig({ file, env: {} }).cors, {
    enabled: true,
    allowed_origins: ['https://app.example.com', 'https://*.preview.example.com'],
    allowed_headers: ['X-Trace'],
  });
  const c = loadConfig({ env: { VEXIL_CORS_ENABLED: 'true', VEXIL_CORS_ALLOWED_ORIGINS: 'http://localhost:3000, http://127.0.0.1:3000' } });
  t.same(c.cors.allowed_origins, ['http://localhost:3000', 'http://127.0.0.1:3000']);
});

t.test('refused with the entry path', async (t) => {
  const env = (origins: string) => () => loadConfig({ env: { VEXIL_CORS_ALLOWED_ORIGINS: origins } });
  t.match(refusal(env('*,https://app.example.com')), /cors\.allowed_origins\.0: "\*" must be the only entry/);
  t.match(refusal(env('https://app.example.com/')), /cors\.allowed_origins\.0: expected an origin/);
  t.match(refusal(env('https://ok.example.com,app.example.com')), /cors\.allowed_origins\.1: expected an origin/);
  t.match(refusal(env('https://*.*.example.com')), /at most one "\*"/);
  t.match(refusal(env('https://app.example.com/path')), /expected an origin/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'cors:\n  allowed_origins: []\n'), env: {} })), /cors\.allowed_origins/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'cors:\n  allowed_headers: ["bad header"]\n'), env: {} })), /cors\.allowed_headers\.0/);
  t.match(refusal(() => loadConfig({ file: configFile(t, 'cors:\n  max_age: 5\n'), env: {} })), /cors/);
});
