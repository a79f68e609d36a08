/**
 * The `storage.object` section that applies: its keys live under the provider's name (`s3`,
 * `azblob`, `googlecloud`), so the poll interval and staleness limit are read from the section
 * `storage.object.type` names. Pure; used by the object source wiring and by what reports the poll
 * interval (OFREP's configuration), without loading any provider SDK.
 */
import type { ObjectStorageConfig } from './types.js';

/** Poll interval and staleness limit (ms) of the configured provider's section (s3's when unset). */
export function objectTiming(object: ObjectStorageConfig): { poll_interval: number; max_staleness: number } {
  return object.type === 'azblob' ? object.azblob : object.type === 'googlecloud' ? object.googlecloud : object.s3;
}
