/**
 * `storage.oci.*` → the OCI source and the store options that go with it (what `vexil serve`
 * wires). Relative paths (bundles_directory, access_token_path) resolve against ctx.baseDir.
 *
 * Cluster workers share one bundle store: blobs are content-addressed and every write is a
 * temp file renamed into place, and index.json updates are locked (see bundle-store.ts).
 */
import { join, resolve } from 'node:path';
import { ConfigError, type ConfigProblem } from '../../config/errors.js';
import type { Config } from '../../config/types.js';
import { createOciSource } from './source.js';
import { ONE_REFERENCE, type Storage, type StorageContext } from '../storage.js';
import { lazyBundleStore } from './bundle-store.js';
import { formatOciReference, parseOciReference, referenceName } from './reference.js';
import { createRegistryClient } from './registry-client.js';
import type { OciReference, RegistryCredentials } from './types.js';

export function ociStorageFromConfig(config: Config, ctx: StorageContext): Storage {
  const oci = config.storage.oci;
  const problems: ConfigProblem[] = [];
  let reference: OciReference | undefined;
  if (oci.repository === undefined || oci.repository.trim() === '') {
    problems.push({ path: 'storage.oci.repository', message: 'is required with storage.type oci (host[:port]/name:tag or host[:port]/name@sha256:<hex>)' });
  } else {
    try {
      reference = parseOciReference(oci.repository, { insecure: oci.insecure });
    } catch (err) {
      problems.push({ path: 'storage.oci.repository', message: err instanceof Error ? err.message : String(err) });
    }
  }
  const { username, password, access_token_path: tokenPath } = oci.authentication;
  if (password !== undefined && tokenPath !== undefined) {
    problems.push({ path: 'storage.oci.authentication.password', message: 'set either password or access_token_path, not both' });
  }
  if (password !== undefined && username === undefined) {
    problems.push({ path: 'storage.oci.authentication.username', message: 'is required with password' });
  }
  if (problems.length > 0 || reference === undefined) throw new ConfigError(problems);

  const credentials: RegistryCredentials = {
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(tokenPath !== undefined ? { tokenFile: resolve(ctx.baseDir, tokenPath) } : {}),
  };
  const hasCredentials = Object.keys(credentials).length > 0;
  const bundlesDir = oci.bundles_directory !== undefined ? resolve(ctx.baseDir, oci.bundles_directory) : join(ctx.dataDir, 'bundles');
  const name = referenceName(reference);
  const source = createOciSource({
    reference,
    client: createRegistryClient({ ...(hasCredentials ? { credentials } : {}), userAgent: 'vexil' }),
    store: lazyBundleStore(bundlesDir),
    maxFileSize: config.storage.max_file_size,
    maxStateSize: config.storage.max_state_size,
  });
  return {
    source,
    store: {
      defaultReference: name,
      pollIntervalMs: oci.poll_interval,
      prebuild: [name],
      maxStalenessMs: oci.max_staleness,
      ...ONE_REFERENCE,
    },
    description: formatOciReference(reference),
  };
}
