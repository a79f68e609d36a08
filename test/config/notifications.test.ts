/**
 * `notifications.*` and `server.public_url`: off by default; a sink's defaults from the schema;
 * from the environment as a JSON array; a webhook without its secret stops the start naming the
 * key; a refused secret or URL is never quoted in the error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { shownUrl, sinksFromConfig } from '../../src/store/notifications/from-config.js';

t.test('off by default', async (t) => {
  const c = loadConfig({ env: {} });
  t.same(c.notifications.sinks, []);
  t.equal(c.server.public_url, undefined);
  t.same(sinksFromConfig(c), []);
});

t.test('a sink from the environment, with the schema defaults', async (t) => {
  const c = loadConfig({ env: { VEXIL_NOTIFICATIONS_SINKS: '[{"type":"slack","url":"https://hooks.slack.com/services/T0/B0/XYZ"}]', VEXIL_SERVER_PUBLIC_URL: 'https://flags.example.com' } });
  t.match(c.notifications.sinks[0], { type: 'slack', references: ['*'], namespaces: [], events: ['served', 'rejected'], timeout: 10_000, retries: 5, queue_size: 1000 });
  const [sink] = sinksFromConfig(c);
  t.equal(sink!.shownUrl, 'https://hooks.slack.com', 'shown: scheme and host only');
  t.equal(c.server.public_url, 'https://flags.example.com');
  t.equal(shownUrl('https://user:pw@example.com:8443/p?q=1'), 'https://example.com:8443');
});

t.test('a webhook needs its secret; a refused secret or URL is not quoted', async (t) => {
  const noSecret = loadConfig({ env: { VEXIL_NOTIFICATIONS_SINKS: '[{"type":"webhook","url":"https://example.com/h"}]' } });
  t.throws(() => sinksFromConfig(noSecret), /notifications\.sinks\[0\]\.secret: required for a webhook sink/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vexil-notify-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'vexil.yml');
  fs.writeFileSync(file, 'notifications:\n  sinks:\n    - { type: webhook, url: "ftp://example.com/tok3n-in-path", secret: short-s3cret }\n');
  try {
    loadConfig({ file, env: {} });
    t.fail('refused');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    const text = (err as Error).message;
    t.match(text, /notifications\.sinks\.0\.secret/, 'names the secret key');
    t.match(text, /notifications\.sinks\.0\.url/, 'names the url key');
    t.notMatch(text, /short-s3cret|tok3n-in-path/, 'quotes neither');
  }
});
