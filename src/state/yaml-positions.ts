/**
 * Where each node of a YAML stream starts, recorded through js-yaml's parse listener.
 *
 * Why not the `yaml` package's CST: on a 6 MB state it needs ~4.5 s and ~800 MB just to build it,
 * so a single warning in a big file would cost that on every reload; a second js-yaml pass with a
 * listener costs about what the fast parse costs (~0.5 s), and the index is a handful of flat
 * arrays. Nodes are linked first-child/next-sibling; a mapping's children alternate key, value.
 */
import jsYaml from 'js-yaml';
import type { PathSegment } from './finding.js';

const KIND_OTHER = 0;
const KIND_MAPPING = 1;
const KIND_SEQUENCE = 2;

export class YamlPositions {
  private readonly openAt: number[] = [];
  private readonly closeAt: number[] = [];
  private readonly firstChild: number[] = [];
  private readonly nextSibling: number[] = [];
  private readonly lastChild: number[] = [];
  private readonly kind: number[] = [];
  /** Scalar nodes: their value as a mapping key reads (js-yaml stringifies keys). */
  private readonly key: (string | undefined)[] = [];
  /** Root node of each document, aligned with what js-yaml's loadAll returns. */
  private readonly roots: number[] = [];
  private readonly anchors = new Map<string, number>();
  private readonly items = new Map<number, number[]>();

  private constructor(private readonly text: string) {}

  /** The index of `text`, or undefined when js-yaml cannot parse it. */
  static of(text: string, schema: jsYaml.Schema): YamlPositions | undefined {
    return YamlPositions.parse(text, schema)?.positions;
  }

  /**
   * The documents and the index from one js-yaml pass (the documents are what `loadAll` with the
   * same schema returns), for a load that knows it will locate problems in this file; undefined
   * when js-yaml cannot parse it.
   */
  static parse(text: string, schema: jsYaml.Schema): { docs: unknown[]; positions: YamlPositions } | undefined {
    const index = new YamlPositions(text);
    try {
      const docs = jsYaml.loadAll(text, undefined, { schema, listener: index.listener() });
      return { docs, positions: index };
    } catch {
      return undefined;
    }
  }

  private listener(): (event: jsYaml.EventType, state: jsYaml.State) => void {
    const stack: number[] = [];
    const { openAt, closeAt, firstChild, nextSibling, lastChild, kind, key, roots, anchors } = this;
    return (event, state) => {
      if (event === 'open') {
        const i = openAt.length;
        openAt.push(state.position);
        closeAt.push(-1);
        firstChild.push(-1);
        nextSibling.push(-1);
        lastChild.push(-1);
        kind.push(KIND_OTHER);
        key.push(undefined);
        const parent = stack.length > 0 ? stack[stack.length - 1] : -1;
        if (parent < 0) roots.push(i);
        else {
          if (lastChild[parent] < 0) firstChild[parent] = i;
          else nextSibling[lastChild[parent]] = i;
          lastChild[parent] = i;
        }
        stack.push(i);
        return;
      }
      const i = stack.pop();
      if (i === undefined) return;
      closeAt[i] = state.position;
      const k = state.kind;
      if (k === 'mapping') kind[i] = KIND_MAPPING;
      else if (k === 'sequence') kind[i] = KIND_SEQUENCE;
      else {
        const r: unknown = state.result;
        key[i] = r === null || typeof r !== 'object' ? String(r) : undefined;
      }
      // Collections restore their own anchor before closing (js-yaml keeps it on the state).
      const anchor = (state as unknown as { anchor?: string | null }).anchor;
      if (anchor) anchors.set(`${roots.length - 1}\u0000${anchor}`, i);
    };
  }

  /** Offset where node `i` starts: its open position past spaces, line breaks and comments. */
  private start(i: number): number {
    const t = this.text;
    let p = this.openAt[i];
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) p++;
      else if (c === 0x23 /* # */ && (p === 0 || /\s/.test(t[p - 1]))) {
        const nl = t.indexOf('\n', p);
        if (nl < 0) return p;
        p = nl + 1;
      } else return p;
    }
  }

  /**
   * Follows an alias (`*name`) to its anchored node, and skips js-yaml's wrapper nodes (a flow
   * collection as a block item is reported twice: an outer node with the same span and kind).
   */
  private deref(doc: number, i: number): number {
    for (let hops = 0; hops < 16; hops++) {
      const c = this.firstChild[i];
      if (c >= 0 && this.nextSibling[c] < 0 && this.kind[c] === this.kind[i] && this.kind[i] !== KIND_OTHER &&
        this.openAt[c] === this.openAt[i] && this.closeAt[c] === this.closeAt[i]) {
        i = c;
        continue;
      }
      const s = this.start(i);
      if (this.text.charCodeAt(s) !== 0x2a /* * */) return i;
      const name = /^\*([^\s,[\]{}]+)/.exec(this.text.slice(s, s + 1024))?.[1];
      const target = name === undefined ? undefined : this.anchors.get(`${doc}\u0000${name}`);
      if (target === undefined || target === i) return i;
      i = target;
    }
    return i;
  }

  /** Key and value nodes of `name` in mapping `m`, looking into `<<` merges too. */
  private entry(doc: number, m: number, name: string, depth = 0): { k: number; v: number } | undefined {
    const merges: number[] = [];
    for (let k = this.firstChild[m]; k >= 0; ) {
      const v = this.nextSibling[k];
      if (this.key[k] === name) return { k, v };
      if (this.key[k] === '<<' && v >= 0) merges.push(v);
      k = v >= 0 ? this.nextSibling[v] : -1;
    }
    if (depth > 4) return undefined;
    for (const v of merges) {
      const src = this.deref(doc, v);
      const sources = this.kind[src] === KIND_SEQUENCE ? this.children(src).map((c) => this.deref(doc, c)) : [src];
      for (const s of sources) {
        if (this.kind[s] !== KIND_MAPPING) continue;
        const found = this.entry(doc, s, name, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  }

  private children(i: number): number[] {
    const out: number[] = [];
    for (let c = this.firstChild[i]; c >= 0; c = this.nextSibling[c]) out.push(c);
    return out;
  }

  /**
   * Offset of the node at `path` in document `doc` (of its key when `at` is 'key'), or of the
   * deepest node on the way when the path does not exist (a missing field points at its parent).
   */
  offsetOf(doc: number, path: readonly PathSegment[], at: 'key' | 'value'): number | undefined {
    const root = this.roots[doc];
    if (root === undefined) return undefined;
    let node = root;
    for (let n = 0; n < path.length; n++) {
      node = this.deref(doc, node);
      const seg = path[n];
      if (this.kind[node] === KIND_MAPPING) {
        const e = this.entry(doc, node, String(seg));
        if (!e) break;
        // An empty value (`description:`) has no text of its own: point at its key.
        if ((n === path.length - 1 && at === 'key') || e.v < 0 || this.start(e.v) >= this.closeAt[e.v]) return this.start(e.k);
        node = e.v;
      } else if (this.kind[node] === KIND_SEQUENCE && typeof seg === 'number') {
        // Items are cached per sequence: many findings in one long `flags` list stay linear.
        let items = this.items.get(node);
        if (!items) this.items.set(node, (items = this.children(node)));
        const c = items[seg];
        if (c === undefined) break;
        node = c;
      } else {
        break;
      }
    }
    return this.start(node);
  }
}
