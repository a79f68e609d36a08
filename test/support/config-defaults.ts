/**
 * The schema's defaults as the option objects sources, state readers and stores take: tests that
 * build one directly spread these first (their own options after, to override), so no test holds
 * a default of its own. Read from a config loaded with no file and no environment, which sets
 * every key to its default in schemas/config.schema.json.
 */
import { loadConfig } from '../../src/config/load.js';

const config = loadConfig({ env: {} });
const git = config.storage.git;

/** `storage.max_file_size` and `storage.max_state_size`: local, object and OCI sources, readState. */
export const STATE_LIMITS = Object.freeze({
  maxFileSize: config.storage.max_file_size,
  maxStateSize: config.storage.max_state_size,
});

/** `storage.git.ref`, `storage.max_file_size` and `storage.git.max_fetch_size`: the git source. */
export const GIT_SOURCE_DEFAULTS = Object.freeze({
  ref: git.ref,
  maxFileSize: config.storage.max_file_size,
  maxFetchSize: git.max_fetch_size,
});

/** What a snapshot store takes from the config besides its source (the git reference policy's defaults). */
export const STORE_DEFAULTS = Object.freeze({
  ...STATE_LIMITS,
  idleTtlMs: git.idle_ttl,
  maxReferences: git.max_references,
  maxPendingBuilds: git.max_pending_builds,
  allowUnlistedReferences: git.allow_commit_references,
});
