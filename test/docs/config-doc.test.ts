/**
 * The key table of docs/configuration.md is generated from schemas/config.schema.json
 * (`npm run docs:config`, scripts/config-doc.ts): it must be exactly what the generator makes now,
 * name every key of the schema with its type and default, and keep the hand-written text around it.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import {
  BEGIN_MARKER,
  CONFIG_DOC_PATH,
  configKeys,
  END_MARKER,
  readConfigSchema,
  renderConfigKeys,
  spliceConfigKeys,
  type SchemaNode,
} from '../../scripts/config-doc.js';

const page = readFileSync(CONFIG_DOC_PATH, 'utf8');
const schema = readConfigSchema();

t.test('docs/configuration.md is what `npm run docs:config` makes now', async (t) => {
  t.ok(page === spliceConfigKeys(page, renderConfigKeys(schema)), 'the key table is up to date (run `npm run docs:config` after changing schemas/config.schema.json)');
  t.ok(page.includes('`vexil serve` runs with defaults'), 'the hand-written explanations stay around the table');
});

t.test('every key of the schema is a row with its type and default', async (t) => {
  const table = renderConfigKeys(schema);
  const keys = configKeys(schema);
  t.ok(keys.length > 150, `${keys.length} keys`);
  for (const path of ['server.http_port', 'log.requests', 'storage.git.max_fetch_size', 'environments.<name>.reference',
    'authentication.methods.oidc.providers.<name>.client_id', 'authentication.methods.token.cleanup.interval', 'data_dir']) {
    t.ok(keys.some((k) => k.path === path), path);
  }
  t.match(table, '| `server.http_port` | `VEXIL_SERVER_HTTP_PORT` | integer | `8080` |');
  t.match(table, '| `log.requests` | `VEXIL_LOG_REQUESTS` | `all`, `errors`, `none` | `"errors"` |');
  t.match(table, '| `authentication.methods.token.cleanup.grace_period` | `VEXIL_AUTHENTICATION_METHODS_TOKEN_CLEANUP_GRACE_PERIOD` | duration | `"30m"` |');
  for (const k of keys) t.ok(table.includes(`| \`${k.path}\` |`), `row for ${k.path}`);
});

t.test('a schema change makes the page stale', async (t) => {
  const changed = structuredClone(schema) as SchemaNode;
  changed.properties!.server!.properties!.new_key = { type: 'integer', default: 7, description: 'a key added later' };
  const next = spliceConfigKeys(page, renderConfigKeys(changed));
  t.not(next, page, 'the page differs once the schema has a new key');
  t.match(next, '| `server.new_key` | `VEXIL_SERVER_NEW_KEY` | integer | `7` | a key added later |');
  t.throws(() => spliceConfigKeys(page.replace(END_MARKER, ''), ''), /markers are missing/);
  t.ok(page.indexOf(BEGIN_MARKER) < page.indexOf(END_MARKER), 'the markers, in order');
});
