/**
 * Defaults live in the config schema (schemas/config.schema.json) only: the modules that apply a
 * configured limit take it as a required option, and their callers pass the loaded config's value
 * (`vexil serve`, `vexil bundle`) or the schema's default (the config-less commands, through
 * src/config/defaults.ts). This reads src/ and fails when a default copied into code comes back:
 * a `DEFAULT_*` constant of a configured limit, one of those options made optional again, or a
 * `?? <literal>` fallback for one of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { defaultStateLimits, schemaDefault } from '../../src/config/defaults.js';
import { loadConfig } from '../../src/config/load.js';
import { configSchema, schemaAt } from '../../src/config/schema.js';
import { storageFromConfig } from '../../src/sources/from-config.js';
import { STORE_DEFAULTS } from '../support/config-defaults.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

/** Option names of modules (sources, readState, the store) whose value is a config key's. */
const CONFIGURED_OPTIONS = [
  'maxFileSize', // storage.max_file_size
  'maxStateSize', // storage.max_state_size
  'maxFetchSize', // storage.git.max_fetch_size
  'maxReferences', // storage.git.max_references
  'maxPendingBuilds', // storage.git.max_pending_builds
  'idleTtlMs', // storage.git.idle_ttl
  'allowUnlistedReferences', // storage.git.allow_commit_references
  'allowUnlisted',
] as const;

/** Constants that once held copies of those keys' defaults. */
const FORMER_COPIES = /\bDEFAULT_(MAX_FILE_SIZE|MAX_STATE_SIZE|MAX_FETCH_SIZE|MAX_REFERENCES|MAX_PENDING_BUILDS|IDLE_TTL\w*)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|tsx)$/.test(e.name) ? [p] : [];
  });
}

/** `file:line: text` for every line of src/ that matches. */
function linesMatching(re: RegExp): string[] {
  const hits: string[] = [];
  for (const file of sourceFiles(SRC)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) hits.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

t.test('no module keeps a copy of a configured default', async (t) => {
  t.same(linesMatching(FORMER_COPIES), [], 'no DEFAULT_* constant of a configured limit in src/');
  const names = CONFIGURED_OPTIONS.join('|');
  t.same(linesMatching(new RegExp(`\\b(${names})\\?:`)), [], 'the options are required wherever they are declared');
  t.same(linesMatching(new RegExp(`\\b(${names})\\s*(\\?\\?|\\|\\|)`)), [], 'no fallback when an option is absent');
  t.same(linesMatching(new RegExp(`\\b(${names})\\s*=\\s*[0-9]`)), [], 'no parameter default');
  // pollIntervalMs absent means "not polled" (`?? 0`); any other literal would be a copy of poll_interval.
  t.same(linesMatching(/\bpollIntervalMs\s*\?\?\s*[1-9]/), [], 'no poll interval fallback');
  t.same(linesMatching(/\bopts\.ref\s*\?\?/), [], 'no fallback for storage.git.ref');
});

t.test('the schema gives every default the config-less commands and the tests read', async (t) => {
  const config = loadConfig({ env: {} });
  t.same(defaultStateLimits(), { maxFileSize: config.storage.max_file_size, maxStateSize: config.storage.max_state_size });
  t.equal(schemaDefault(['storage', 'git', 'max_fetch_size']), config.storage.git.max_fetch_size);
  t.equal(schemaDefault(['storage', 'git', 'ref']), config.storage.git.ref);
  t.same(STORE_DEFAULTS, {
    maxFileSize: config.storage.max_file_size,
    maxStateSize: config.storage.max_state_size,
    idleTtlMs: config.storage.git.idle_ttl,
    maxReferences: config.storage.git.max_references,
    maxPendingBuilds: config.storage.git.max_pending_builds,
    allowUnlistedReferences: config.storage.git.allow_commit_references,
  });
  t.throws(() => schemaDefault(['storage', 'git', 'repository']), /has no default/, 'a key without a default is a schema bug, not undefined');
});

t.test('vexil serve hands the git keys to the store as configured', async (t) => {
  const config = loadConfig({
    env: {
      VEXIL_STORAGE_TYPE: 'git',
      VEXIL_STORAGE_GIT_REPOSITORY: 'https://example.invalid/flags.git',
      VEXIL_STORAGE_GIT_CACHE_DIR: t.testdir(),
      VEXIL_STORAGE_GIT_IDLE_TTL: '3m',
      VEXIL_STORAGE_GIT_MAX_REFERENCES: '5',
      VEXIL_STORAGE_GIT_MAX_PENDING_BUILDS: '2',
      VEXIL_STORAGE_GIT_ALLOW_COMMIT_REFERENCES: 'false',
    },
  });
  const { store } = storageFromConfig(config, { baseDir: ROOT, cwd: ROOT });
  t.match(store, { idleTtlMs: 180_000, maxReferences: 5, maxPendingBuilds: 2, allowUnlistedReferences: false, pollIntervalMs: 30_000 });
});

t.test('log.requests is the schema default, errors, when the config does not set it', async (t) => {
  t.equal(loadConfig({ env: {} }).log.requests, schemaAt(configSchema().schema, ['log', 'requests'])?.default);
  t.equal(loadConfig({ env: {} }).log.requests, 'errors');
});
