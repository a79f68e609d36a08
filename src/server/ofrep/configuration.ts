/**
 * `GET /ofrep/v1/configuration`: what an OFREP provider may assume about this server.
 *
 * - `name`: "vexil" (Flipt answers "flipt"; providers only display it).
 * - `cacheInvalidation.polling`: enabled, since bulk answers carry an ETag and a poll of unchanged
 *   state is a 304 (ofrep/etag.ts). `minPollingIntervalMs` is how often the state itself can
 *   change: the backend's poll interval (git, oci, object); polling faster only repeats the same
 *   answer. The local backend watches its folder, so it has no minimum (0). (Flipt derives both
 *   from its evaluation cache, which vexil does not have: a snapshot is served until a newer
 *   valid one replaces it.)
 * - `flagEvaluation.supportedTypes`: string (variant flags) and boolean (boolean flags), as Flipt.
 */
import type { Config } from '../../config/types.js';
import { objectTiming } from '../../config/object-storage.js';

export interface OfrepConfiguration {
  name: string;
  capabilities: {
    cacheInvalidation: { polling: { enabled: boolean; minPollingIntervalMs: number } };
    flagEvaluation: { supportedTypes: string[] };
  };
}

/** How often the backend is asked for new state, in ms (0: it is watched). */
export function statePollIntervalMs(storage: Config['storage']): number {
  switch (storage.type) {
    case 'git':
      return storage.git.poll_interval;
    case 'oci':
      return storage.oci.poll_interval;
    case 'object':
      return objectTiming(storage.object).poll_interval;
    case 'local':
      return 0;
  }
}

export function ofrepConfiguration(storage: Config['storage']): OfrepConfiguration {
  return {
    name: 'vexil',
    capabilities: {
      cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: statePollIntervalMs(storage) } },
      flagEvaluation: { supportedTypes: ['string', 'boolean'] },
    },
  };
}
