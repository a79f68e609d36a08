/**
 * `storage.git.*` → the git source and the reference policy that goes with it (what `vexil serve`
 * wires). Relative paths (a local repository, ca_cert_path, access_token_path, cache_dir) resolve
 * against `baseDir`: the config file's folder, else the working directory.
 */
import { join, resolve } from 'node:path';
import { ConfigError } from '../../config/errors.js';
import type { Config } from '../../config/types.js';
import { createGitSource, type GitSource } from './source.js';
import type { ReferencePolicy } from '../storage.js';
import type { SourceLogger } from '../types.js';
import { gitAuth, privateDefaultCacheDir, gitConfigProblems, parseRepository } from './options.js';
import { trimCharacter } from '../../text.js';

export interface GitStorage {
  readonly source: GitSource;
  /** The reference policy of a git source: default reference, polling, prebuild, eviction, staleness, caps on references built on request. */
  readonly store: ReferencePolicy;
  /** For messages and problem locations: `<repository>@<ref>[/<directory>]`, without credentials. */
  readonly description: string;
}

/** Throws ConfigError when storage.git is unusable (SSH URL, missing repository...). */
/**
 * `workerSlot`: set in a cluster worker. Each worker keeps its own mirror under `worker-<slot>`,
 * because a mirror compaction swaps the folder, which another worker could be reading.
 */
export function gitStorageFromConfig(config: Config, baseDir: string, opts: { workerSlot?: number; logger?: SourceLogger } = {}): GitStorage {
  const git = config.storage.git;
  const problems = gitConfigProblems(git, baseDir);
  if (problems.length > 0) throw new ConfigError(problems);
  const repository = git.repository as string;
  const location = parseRepository(repository, baseDir);
  const auth = gitAuth(git, location, baseDir);
  const source = createGitSource({
    repository: location.kind === 'path' ? location.path : repository,
    ref: git.ref,
    directory: git.directory,
    cacheDir: join(
      git.cache_dir !== undefined ? resolve(baseDir, git.cache_dir) : privateDefaultCacheDir(),
      opts.workerSlot === undefined ? '' : `worker-${opts.workerSlot}`,
    ),
    insecureSkipTls: git.insecure_skip_tls,
    maxFileSize: config.storage.max_file_size,
    maxFetchSize: git.max_fetch_size,
    ...(git.ca_cert_path !== undefined ? { caCertPath: resolve(baseDir, git.ca_cert_path) } : {}),
    ...(auth !== undefined ? { auth } : {}),
    ...(opts.logger !== undefined ? { logger: opts.logger } : {}),
  });
  const directory = trimCharacter(git.directory, '/');
  return {
    source,
    store: {
      defaultReference: git.ref,
      pollIntervalMs: git.poll_interval,
      prebuild: git.prebuild ?? [git.ref],
      idleTtlMs: git.idle_ttl,
      maxStalenessMs: git.max_staleness,
      maxReferences: git.max_references,
      maxPendingBuilds: git.max_pending_builds,
      allowUnlistedReferences: git.allow_commit_references,
    },
    description: `${source.repository}@${git.ref}${directory === '' ? '' : `/${directory}`}`,
  };
}
