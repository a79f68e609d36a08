/**
 * `storage.git.*` as the git source needs it, and the checks the config schema cannot make
 * (they depend on several keys or on the value's form): the repository is required and must be
 * HTTP(S) or a local path (isomorphic-git has no SSH transport), at most one kind of credentials,
 * one token source, valid prebuild globs.
 */
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigProblem } from '../../config/errors.js';
import type { GitStorageConfig } from '../../config/types.js';
import { compileGlob } from '../../state/glob.js';
import type { GitAuth } from './auth.js';
import { trimTrailingCharacter } from '../../text.js';
import { ensurePrivateDir } from '../../config/private-dir.js';

export type RepositoryLocation =
  | { readonly kind: 'http'; readonly url: string; readonly basic?: { username: string; password: string } }
  | { readonly kind: 'path'; readonly path: string };

export class GitOptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitOptionsError';
  }
}

const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)/;

/** An http(s) URL (credentials in it moved out), or a local repository path. Throws GitOptionsError. */
export function parseRepository(repository: string, baseDir = process.cwd()): RepositoryLocation {
  const r = repository.trim();
  if (/^(ssh|git\+ssh|ssh\+git):\/\//i.test(r) || SCP_LIKE.test(r)) {
    throw new GitOptionsError(
      `SSH repositories are not supported ("${redact(r)}"): vexil talks to Git servers over HTTP(S) only. ` +
        'Use the https:// URL of the repository with storage.git.authentication.basic or .token',
    );
  }
  if (/^git:\/\//i.test(r)) {
    throw new GitOptionsError(`the git:// protocol is not supported ("${r}"): use the https:// URL of the repository`);
  }
  if (/^https?:\/\//i.test(r)) {
    const u = new URL(r);
    const basic =
      u.username !== '' ? { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } : undefined;
    u.username = '';
    u.password = '';
    const url = trimTrailingCharacter(u.toString(), '/');
    return basic !== undefined ? { kind: 'http', url, basic } : { kind: 'http', url };
  }
  if (/^file:\/\//i.test(r)) return { kind: 'path', path: fileURLToPath(r) };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(r)) {
    throw new GitOptionsError(`unsupported repository URL scheme in "${redact(r)}": use https://, http:// or a local path`);
  }
  return { kind: 'path', path: isAbsolute(r) ? r : resolve(baseDir, r) };
}

function redact(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//');
}

/** Problems of `storage.git` when storage.type is git (the schema has checked types already). */
export function gitConfigProblems(git: GitStorageConfig, baseDir = process.cwd()): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, message: string) => problems.push({ path: `storage.git.${path}`, message });
  if (git.repository === undefined) {
    add('repository', 'required when storage.type is git (an https:// URL or a local repository path)');
  } else {
    try {
      const loc = parseRepository(git.repository, baseDir);
      if (loc.kind === 'path' && !existsSync(loc.path)) add('repository', `no repository at ${loc.path}`);
    } catch (err) {
      add('repository', (err as Error).message);
    }
  }
  const { basic, token } = git.authentication;
  if (basic !== undefined && token !== undefined) add('authentication', 'set only one of basic and token');
  if (token !== undefined) {
    const n = (token.access_token !== undefined ? 1 : 0) + (token.access_token_path !== undefined ? 1 : 0);
    if (n !== 1) add('authentication.token', 'set exactly one of access_token and access_token_path');
  }
  if (git.ca_cert_path !== undefined && !existsSync(resolve(baseDir, git.ca_cert_path))) {
    add('ca_cert_path', `no such file: ${git.ca_cert_path}`);
  }
  (git.prebuild ?? []).forEach((pattern, i) => {
    try {
      compileGlob(pattern);
    } catch (err) {
      add(`prebuild.${i}`, (err as Error).message);
    }
  });
  if (git.directory.split('/').includes('..')) add('directory', 'must stay inside the repository (no "..")');
  for (const key of ['poll_interval', 'idle_ttl', 'max_staleness'] as const) {
    if (git[key] <= 0) add(key, 'must be a positive duration');
  }
  return problems;
}

/** Credentials from the config (or from user:password in the URL). */
export function gitAuth(git: GitStorageConfig, location: RepositoryLocation, baseDir = process.cwd()): GitAuth | undefined {
  const { basic, token } = git.authentication;
  if (basic !== undefined) return { basic };
  if (token?.access_token !== undefined) return { token: token.access_token };
  if (token?.access_token_path !== undefined) return { tokenPath: resolve(baseDir, token.access_token_path) };
  if (location.kind === 'http' && location.basic !== undefined) return { basic: location.basic };
  return undefined;
}

/** Where mirrors live when storage.git.cache_dir is not set: one folder per user in the temp folder. */
export function defaultCacheDir(): string {
  let user = '';
  try {
    user = `-${userInfo().username}`;
  } catch {
    // no user name (a uid without a passwd entry): the owner check still applies
  }
  return join(tmpdir(), `vexil-git-cache${user}`);
}

/**
 * defaultCacheDir(), created private (0700) or refused when another user made it: a planted cache
 * could feed vexil forged objects (src/private-dir.ts).
 */
export function privateDefaultCacheDir(): string {
  const dir = defaultCacheDir();
  ensurePrivateDir(dir, 'the default Git cache folder (storage.git.cache_dir)');
  return dir;
}
