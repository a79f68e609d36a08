/**
 * The build cache shared by every build of a store: built Segment/Flag objects keyed by the
 * parsed document objects they came from (state/build.ts owns the entries). A WeakMap, so an
 * entry lives exactly as long as the parse cache keeps its document; no sweep of its own.
 */
import type { BuildCache } from '../state/load.js';

export function createBuildCache(): BuildCache {
  const built = new WeakMap<object, unknown>();
  return {
    get: (doc) => built.get(doc),
    set(doc, value) {
      built.set(doc, value);
    },
  };
}
