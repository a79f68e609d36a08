/**
 * The parsed-document cache shared by every build of a store (all references, all reloads), keyed
 * by content id, so a file whose bytes did not change is not parsed again. Entries not used for a
 * few generations (refresh cycles) are dropped, so deleted and edited files do not pile up.
 */
import type { BuildCache, ParseCache } from '../state/load.js';
import { createBuildCache } from './build-cache.js';

export interface ParseCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
}

export interface GenerationalParseCache extends ParseCache {
  /** Start a new generation (one refresh cycle or one on-demand build). */
  nextGeneration(): void;
  /** Drop entries unused in the last `keep` generations. */
  sweep(keep?: number): void;
  stats(): ParseCacheStats;
  /** Built segments/flags keyed by the parsed objects held here (weakly: they go with them). */
  readonly buildCache: BuildCache;
}

export function createParseCache(): GenerationalParseCache {
  const entries = new Map<string, { value: unknown; gen: number }>();
  let gen = 0;
  let hits = 0;
  let misses = 0;
  return {
    buildCache: createBuildCache(),
    get(contentId) {
      const e = entries.get(contentId);
      if (e === undefined) {
        misses++;
        return undefined;
      }
      hits++;
      e.gen = gen;
      return e.value;
    },
    set(contentId, value) {
      entries.set(contentId, { value, gen });
    },
    has: (contentId) => entries.has(contentId),
    nextGeneration() {
      gen++;
    },
    sweep(keep = 2) {
      for (const [k, e] of entries) if (e.gen < gen - keep) entries.delete(k);
    },
    stats: () => ({ hits, misses, entries: entries.size }),
  };
}
