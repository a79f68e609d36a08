/**
 * The build cache shared by every build of a store: built Segment/Flag objects keyed by the
 * parsed document objects they came from (state/build.ts owns the entries), and the content table
 * through which parsed flags and segments, and built namespaces, of equal content are shared
 * between references (state/intern.ts). Both hold their values weakly: an entry lives exactly as
 * long as some parse-cache entry or snapshot holds its object; no sweep of its own.
 */
import type { BuildCache, ContentTable } from '../state/load.js';

export function createBuildCache(): BuildCache {
  const built = new WeakMap<object, unknown>();
  return {
    get: (doc) => built.get(doc),
    set(doc, value) {
      built.set(doc, value);
    },
    contents: createContentTable(),
  };
}

export function createContentTable(): ContentTable & { readonly size: number } {
  const held = new Map<string, WeakRef<object>>();
  // Drops a key once its object is collected (unless the key was re-pointed meanwhile).
  const registry = new FinalizationRegistry<string>((key) => {
    if (held.get(key)?.deref() === undefined) held.delete(key);
  });
  return {
    lookup(key) {
      return held.get(key)?.deref();
    },
    remember(key, value) {
      held.set(key, new WeakRef(value));
      registry.register(value, key);
    },
    get size() {
      return held.size;
    },
  };
}
