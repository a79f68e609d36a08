/**
 * How much YAML aliases make a parsed file stand for. js-yaml does not copy an alias: `*a` is the
 * very object anchored as `&a`, so parsing a "billion laughs" file (a list of ten aliases of a list
 * of ten aliases of ...) costs only its text. Everything after the parse walks values as trees,
 * though: the schema and semantic checks visit each occurrence, and the builder makes one object
 * per occurrence (a rule aliased into 1,000 flags becomes 1,000 rules). A 100 KB file of valid
 * flags whose `rules` and `distributions` are aliases stands for a billion distributions and
 * takes the process down; this measures that before anything walks the documents.
 *
 * The count is exact and linear in the number of distinct parsed nodes: the expanded size of each
 * collection is computed once (memoized by object identity, which is per anchor) and an alias
 * costs one lookup. An alias whose target contains the alias itself (`&a [*a]`, which js-yaml
 * builds as a cyclic object) stands for an infinite document and is refused too.
 */
import type { Finding, PathSegment } from './finding.js';
import type { RuleId } from './rules.js';

/**
 * Values (nodes: every scalar, list and mapping) that aliases may add, beyond the values written
 * out, to the YAML state files of one revision taken together. Writing a value out costs at least
 * a few bytes of a file whose size `storage.max_file_size` bounds; an alias costs a few bytes and
 * may stand for any number of values, so without a budget a small file can need unbounded memory
 * and time. A million values is ten times what one attachment may hold (MAX_ATTACHMENT_NODES in
 * attachment.ts) and far above what sharing an attachment or a list of segment keys through an
 * anchor needs. Built out, it costs tens of MB (measured: a file just under the budget whose
 * aliases stand for 333,000 distributions adds about 60 MB of RSS to the loaded snapshot).
 */
export const MAX_ALIAS_EXPANSION = 1_000_000;

/** The rule of the located problem when the budget is exceeded. */
export const ALIAS_EXPANSION_RULE = 'yaml.alias-expansion' satisfies RuleId;

/** What aliases add to a file: the count, or where the budget is exceeded (the alias that does it). */
export type AliasExpansion =
  | { readonly added: number }
  | { readonly over: { readonly doc: number; readonly path: readonly PathSegment[]; readonly cycle: boolean } };

/** Marks a collection whose size is being computed: meeting it again means an alias cycle. */
const IN_PROGRESS = -1;

/**
 * The values aliases add to `docs` (js-yaml's documents of one file), or the first alias that
 * takes the total past `budget`. Recursion depth is the nesting depth, which js-yaml bounds
 * (its `maxDepth`, 100 by default); cycles are detected, never followed.
 */
export function measureAliasExpansion(docs: readonly unknown[], budget: number): AliasExpansion {
  const measure = new Measure(budget);
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d];
    if (doc === null || typeof doc !== 'object') continue;
    measure.sizeOf(doc);
    if (measure.over !== undefined) return { over: { doc: d, path: measure.path, cycle: measure.over === 'cycle' } };
  }
  return { added: measure.added };
}

class Measure {
  /** Expanded size of each collection met (by identity, so once per anchor), or IN_PROGRESS. */
  private readonly sizes = new Map<object, number>();
  /** Where the walk is; once `over` is set, the path to the alias that did it. */
  readonly path: PathSegment[] = [];
  added = 0;
  over: 'budget' | 'cycle' | undefined;

  constructor(private readonly budget: number) {}

  /** Expanded size of the collection `o`, met for the first time at `path`; stops early once `over` is set. */
  sizeOf(o: object): number {
    this.sizes.set(o, IN_PROGRESS);
    let total = 1;
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) {
        const n = this.child(i, o[i]);
        if (n < 0) return total;
        total += n;
      }
    } else {
      const rec = o as Record<string, unknown>;
      for (const k of Object.keys(rec)) {
        const n = this.child(k, rec[k]);
        if (n < 0) return total;
        total += n;
      }
    }
    this.sizes.set(o, total);
    return total;
  }

  /** Expanded size of the value under `key` of the collection being measured; -1 when over. */
  private child(key: PathSegment, v: unknown): number {
    if (v === null || typeof v !== 'object') return 1;
    const known = this.sizes.get(v);
    this.path.push(key);
    if (known === undefined) {
      const n = this.sizeOf(v);
      if (this.over !== undefined) return -1;
      this.path.pop();
      return n;
    }
    // Met before: this occurrence is an alias (or a value a `<<` merge copied), written as one
    // node and standing for the whole collection.
    if (known === IN_PROGRESS) this.over = 'cycle';
    else if ((this.added += known - 1) > this.budget) this.over = 'budget';
    if (this.over !== undefined) return -1;
    this.path.pop();
    return known;
  }
}

/** The located-problem finding for an `over` result. */
export function aliasExpansionFinding(over: Extract<AliasExpansion, { over: unknown }>['over'], scope: 'file' | 'state'): Finding {
  const message = over.cycle
    ? 'this alias refers to a node that contains it: it stands for an infinite document; refused without expanding it'
    : `YAML aliases make ${scope === 'file' ? 'this file' : "the state's YAML files together"} stand for more than ${MAX_ALIAS_EXPANSION.toLocaleString('en-US')} values beyond those written out (this alias takes it past the limit); refused without expanding it`;
  return {
    severity: 'error',
    rule: ALIAS_EXPANSION_RULE,
    message,
    hint: over.cycle
      ? 'an alias cannot be used inside the node its anchor names'
      : 'write the values out, or nest fewer aliases (an alias of a list of aliases multiplies)',
    doc: over.doc,
    path: over.path,
  };
}
