/**
 * `storage.*` → the configured backend (source + store options + description): one entry point
 * for `vexil serve`, one branch per storage type. Relative paths resolve against ctx.baseDir.
 */
import { resolveDataDir } from '../config/data-dir.js';
import type { Config } from '../config/types.js';
import type { SourceLogger } from './types.js';
import { gitStorageFromConfig } from './git/from-config.js';
import { createLocalSource, LOCAL_REFERENCE } from './local.js';
import { objectStorageFromConfig } from './object/from-config.js';
import { ociStorageFromConfig } from './oci/from-config.js';
import { ONE_REFERENCE, type Storage, type StorageContext } from './storage.js';

/** Throws ConfigError (key paths) when the backend's keys are unusable. */
export function storageFromConfig(config: Config, opts: { baseDir: string; cwd: string; workerSlot?: number; logger?: SourceLogger }): Storage {
  const ctx: StorageContext = {
    baseDir: opts.baseDir,
    dataDir: resolveDataDir(config.data_dir, opts.cwd),
    ...(opts.workerSlot !== undefined ? { workerSlot: opts.workerSlot } : {}),
  };
  switch (config.storage.type) {
    case 'local':
      return {
        source: createLocalSource({
          path: config.storage.local.path,
          maxFileSize: config.storage.max_file_size,
          maxStateSize: config.storage.max_state_size,
        }),
        store: { defaultReference: LOCAL_REFERENCE, ...ONE_REFERENCE },
        description: config.storage.local.path,
      };
    case 'git':
      return gitStorageFromConfig(config, ctx.baseDir, {
        ...(ctx.workerSlot === undefined ? {} : { workerSlot: ctx.workerSlot }),
        ...(opts.logger === undefined ? {} : { logger: opts.logger }),
      });
    case 'oci':
      return ociStorageFromConfig(config, ctx);
    case 'object':
      return objectStorageFromConfig(config, ctx);
  }
}
