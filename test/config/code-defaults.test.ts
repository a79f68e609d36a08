/**
 * Defaults live in the config schema (schemas/config.schema.json). A few modules still hold a
 * copy of one as a constant, for callers that build them without a config (tests, the CLI's
 * config-less commands). Until those take the value as a required option, this pins each copy to
 * the schema, so the two cannot drift apart; the served value always comes from the config.
 */
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { configSchema, schemaAt } from '../../src/config/schema.js';
import { DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_STATE_SIZE } from '../../src/sources/file-refused.js';
import { DEFAULT_MAX_FETCH_SIZE } from '../../src/sources/git/mirror.js';
import { DEFAULT_MAX_PENDING_BUILDS, DEFAULT_MAX_REFERENCES } from '../../src/store/snapshot-store.js';

const COPIES: Array<[string, number, readonly string[]]> = [
  ['DEFAULT_MAX_FILE_SIZE (sources/file-refused.ts)', DEFAULT_MAX_FILE_SIZE, ['storage', 'max_file_size']],
  ['DEFAULT_MAX_STATE_SIZE (sources/file-refused.ts)', DEFAULT_MAX_STATE_SIZE, ['storage', 'max_state_size']],
  ['DEFAULT_MAX_FETCH_SIZE (sources/git/mirror.ts)', DEFAULT_MAX_FETCH_SIZE, ['storage', 'git', 'max_fetch_size']],
  ['DEFAULT_MAX_REFERENCES (store/snapshot-store.ts)', DEFAULT_MAX_REFERENCES, ['storage', 'git', 'max_references']],
  ['DEFAULT_MAX_PENDING_BUILDS (store/snapshot-store.ts)', DEFAULT_MAX_PENDING_BUILDS, ['storage', 'git', 'max_pending_builds']],
];

t.test('each default copied in code equals the schema default', async (t) => {
  const { schema } = configSchema();
  for (const [name, value, path] of COPIES) t.equal(value, schemaAt(schema, path)?.default, `${name} = ${path.join('.')}`);
});

t.test('log.requests is the schema default, errors, when the config does not set it', async (t) => {
  t.equal(loadConfig({ env: {} }).log.requests, schemaAt(configSchema().schema, ['log', 'requests'])?.default);
  t.equal(loadConfig({ env: {} }).log.requests, 'errors');
});
