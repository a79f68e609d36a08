/**
 * What `vexil bundle` takes from the config (the same file and VEXIL_* variables as `vexil serve`:
 * storage.oci.*, data_dir, storage.max_file_size) merged with its command-line flags, which win.
 * Relative paths in the config file resolve against its folder, others against the working folder.
 */
import { dirname, join, resolve } from 'node:path';
import { resolveDataDir } from '../../config/data-dir.js';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/types.js';
import type { RegistryCredentials } from '../../sources/oci/types.js';
import { BUNDLE_USAGE, UsageError } from '../usage.js';

export type ManifestVersion = '1.0' | '1.1';
export const MANIFEST_VERSIONS: readonly ManifestVersion[] = ['1.1', '1.0'];

export interface BundleFlags {
  readonly config?: string;
  readonly bundlesDir?: string;
  readonly manifestVersion?: string;
  readonly username?: string;
  /** The password read from stdin (`--password-stdin`). */
  readonly password?: string;
  readonly insecure?: boolean;
}

export interface BundleSettings {
  readonly bundlesDir: string;
  readonly manifestVersion: ManifestVersion;
  readonly maxFileSize: number;
  readonly maxStateSize: number;
  readonly insecure: boolean;
  readonly credentials?: RegistryCredentials;
}

/** Throws ConfigError (exit 1) for a bad config, UsageError (exit 2) for flags that do not fit together. */
export function resolveSettings(flags: BundleFlags, cwd: string, env: NodeJS.ProcessEnv): BundleSettings {
  const config: Config = loadConfig({ ...(flags.config !== undefined ? { file: flags.config } : {}), cwd, env });
  const baseDir = flags.config !== undefined ? dirname(resolve(cwd, flags.config)) : cwd;
  const oci = config.storage.oci;

  let manifestVersion = oci.manifest_version;
  if (flags.manifestVersion !== undefined) {
    if (!(MANIFEST_VERSIONS as readonly string[]).includes(flags.manifestVersion)) {
      throw new UsageError(`--manifest-version must be 1.0 or 1.1, not "${flags.manifestVersion}"`, BUNDLE_USAGE);
    }
    manifestVersion = flags.manifestVersion as ManifestVersion;
  }

  const bundlesDir =
    flags.bundlesDir !== undefined
      ? resolve(cwd, flags.bundlesDir)
      : oci.bundles_directory !== undefined
        ? resolve(baseDir, oci.bundles_directory)
        : join(resolveDataDir(config.data_dir, cwd), 'bundles');

  const credentials = pickCredentials(flags, oci.authentication, baseDir);
  return {
    bundlesDir,
    manifestVersion,
    maxFileSize: config.storage.max_file_size,
    maxStateSize: config.storage.max_state_size,
    insecure: flags.insecure === true || oci.insecure,
    ...(credentials !== undefined ? { credentials } : {}),
  };
}

/** Flags replace the configured credentials; a password given on stdin replaces a token file. */
function pickCredentials(
  flags: BundleFlags,
  configured: Config['storage']['oci']['authentication'],
  baseDir: string,
): RegistryCredentials | undefined {
  const username = flags.username ?? configured.username;
  if (flags.password !== undefined) {
    if (username === undefined) {
      throw new UsageError('--password-stdin needs a user name: --username NAME (or storage.oci.authentication.username)', BUNDLE_USAGE);
    }
    return { username, password: flags.password };
  }
  const password = configured.password;
  const tokenFile = configured.access_token_path !== undefined ? resolve(baseDir, configured.access_token_path) : undefined;
  if (flags.username !== undefined && password === undefined && tokenFile === undefined) {
    throw new UsageError('--username needs a password: --password-stdin (or storage.oci.authentication.password)', BUNDLE_USAGE);
  }
  if (username === undefined && password === undefined && tokenFile === undefined) return undefined;
  return {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
  };
}
