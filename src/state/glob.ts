/**
 * Glob patterns of the index file (and of `storage.git.prebuild`), with the semantics Flipt gets
 * from gobwas/glob compiled without separator runes: `*` (and `**`) match any run of characters
 * INCLUDING `/`, `?` one character, `[abc]` / `[a-z]` / `[!a-z]` a class, `{a,b}` alternatives
 * (which may hold globs), `\x` a literal x. Characters are code points; matching is exact (case
 * sensitive) and covers the whole path. Patterns are compiled once and cached.
 *
 * Why no RegExp: the patterns come from state content, and a backtracking regex engine takes
 * exponential time on `*a*a*a*a*a*a*b` against a long path. Instead:
 * - a pattern of literals and `*` only (the default includes, most real globs) is matched as
 *   literal pieces: the first a prefix, the last a suffix, each one between at its leftmost place
 *   after the previous (leftmost is always right when only `*` separates them); a few string
 *   searches, never more than path length × pattern length;
 * - any other pattern compiles to a small nondeterministic automaton (one state per literal, `?`,
 *   class or `*`, plus the forks of `{a,b}`), simulated over the path with every live state at
 *   once: each character of the path advances each state at most once, so a match costs at most
 *   path length × pattern states, and typically (few live states) a small constant per character.
 */

export class GlobSyntaxError extends Error {
  constructor(
    readonly pattern: string,
    readonly offset: number,
    reason: string,
  ) {
    super(`invalid glob ${JSON.stringify(pattern)}: ${reason} at offset ${offset}`);
    this.name = 'GlobSyntaxError';
  }
}

const cache = new Map<string, CompiledGlob>();
const CACHE_LIMIT = 1024;

/** The compiled form of `pattern`; throws GlobSyntaxError on a malformed pattern. */
export function compileGlob(pattern: string): CompiledGlob {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const glob = new CompiledGlob(parse(pattern));
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, glob);
  return glob;
}

export function globMatch(pattern: string, path: string): boolean {
  return compileGlob(pattern).test(path);
}

// ----- syntax ----------------------------------------------------------------------------------

type GlobNode =
  | { readonly kind: 'char'; readonly cp: number }
  | { readonly kind: 'any' }
  | { readonly kind: 'star' }
  /** `ranges` holds inclusive [lo, hi] code point pairs, flattened. */
  | { readonly kind: 'class'; readonly ranges: readonly number[]; readonly negate: boolean }
  | { readonly kind: 'alt'; readonly branches: readonly GlobNode[][] };

const ANY: GlobNode = { kind: 'any' };
const STAR: GlobNode = { kind: 'star' };

const cp = (ch: string) => ch.codePointAt(0)!;

/**
 * The pattern as a sequence of nodes. Offsets in errors count code points, except for an
 * unclosed `{`, reported at the pattern's length in UTF-16 units. The messages are part of the
 * located problems users see, so these offsets are part of the interface.
 */
function parse(p: string): GlobNode[] {
  const chars = [...p];
  // The sequence being built, and those of the enclosing `{` groups (alternatives done so far).
  let seq: GlobNode[] = [];
  const open: Array<{ outer: GlobNode[]; branches: GlobNode[][] }> = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    switch (c) {
      case '\\': {
        if (i + 1 >= chars.length) throw new GlobSyntaxError(p, i, 'dangling escape');
        seq.push({ kind: 'char', cp: cp(chars[++i]) });
        break;
      }
      case '*':
        while (chars[i + 1] === '*') i++;
        seq.push(STAR);
        break;
      case '?':
        seq.push(ANY);
        break;
      case '[': {
        const start = i;
        i++;
        let negate = false;
        if (chars[i] === '!') {
          negate = true;
          i++;
        }
        const ranges: number[] = [];
        let closed = false;
        let count = 0;
        for (; i < chars.length; i++) {
          const d = chars[i];
          // A `]` right after `[` or `[!` is a member, not the end.
          if (d === ']' && count > 0) {
            closed = true;
            break;
          }
          if (d === '\\') {
            if (i + 1 >= chars.length) break;
            const x = cp(chars[++i]);
            ranges.push(x, x);
          } else if (chars[i + 1] === '-' && i + 2 < chars.length && chars[i + 2] !== ']') {
            const lo = d;
            const hi = chars[i + 2] === '\\' ? chars[i + 3] : chars[i + 2];
            if (hi === undefined) break;
            if (cp(lo) > cp(hi)) throw new GlobSyntaxError(p, i, `inverted range ${lo}-${hi}`);
            ranges.push(cp(lo), cp(hi));
            i += chars[i + 2] === '\\' ? 3 : 2;
          } else {
            ranges.push(cp(d), cp(d));
          }
          count++;
        }
        if (!closed) throw new GlobSyntaxError(p, start, 'unclosed character class');
        seq.push({ kind: 'class', ranges, negate });
        break;
      }
      case '{':
        open.push({ outer: seq, branches: [] });
        seq = [];
        break;
      case '}': {
        const group = open.pop();
        if (group === undefined) throw new GlobSyntaxError(p, i, 'unmatched }');
        group.branches.push(seq);
        seq = group.outer;
        seq.push({ kind: 'alt', branches: group.branches });
        break;
      }
      case ',':
        if (open.length > 0) {
          open[open.length - 1].branches.push(seq);
          seq = [];
        } else {
          seq.push({ kind: 'char', cp: 44 });
        }
        break;
      default:
        seq.push({ kind: 'char', cp: cp(c) });
    }
  }
  if (open.length > 0) throw new GlobSyntaxError(p, p.length, 'unclosed {');
  return seq;
}

// ----- automaton -------------------------------------------------------------------------------

// State kinds. CHAR, ANY, CLASS consume one code point and go to `next`; STAR consumes one and
// stays, or moves on to `next` without consuming; FORK moves on to each of its targets without
// consuming; MATCH accepts when the path is over.
const CHAR = 0;
const ANY_CHAR = 1;
const CLASS = 2;
const STAR_LOOP = 3;
const FORK = 4;
const MATCH = 5;

export class CompiledGlob {
  /** Patterns of literals and `*` only: the literal pieces between the stars (else null). */
  private readonly pieces: readonly string[] | null;
  private readonly kind: number[] = [];
  /** CHAR: the code point; CLASS: index into `classes`; FORK: index into `forks`. */
  private readonly arg: number[] = [];
  private readonly next: number[] = [];
  private readonly classes: Array<{ readonly ranges: readonly number[]; readonly negate: boolean }> = [];
  private readonly forks: number[][] = [];
  private readonly start: number;
  // Work buffers of `test` (synchronous, so one set per pattern is enough).
  private current: Int32Array = new Int32Array(0);
  private following: Int32Array = new Int32Array(0);
  private stack: Int32Array = new Int32Array(0);
  /** Per state: the step it was last added in, so a state is added at most once per step. */
  private addedAt: Int32Array = new Int32Array(0);
  private step = 0;

  constructor(nodes: readonly GlobNode[]) {
    this.pieces = literalPieces(nodes);
    this.start = this.pieces === null ? this.sequence(nodes, this.state(MATCH, 0, -1)) : -1;
  }

  /** Whether the whole of `path` matches. */
  test(path: string): boolean {
    return this.pieces !== null ? matchPieces(this.pieces, path) : this.simulate(path);
  }

  private simulate(path: string): boolean {
    const n = this.kind.length;
    if (this.addedAt.length !== n) {
      this.current = new Int32Array(n);
      this.following = new Int32Array(n);
      // A closure pushes each epsilon edge at most once: one per star, the forks' targets, the start.
      let edges = n + 1;
      for (const targets of this.forks) edges += targets.length;
      this.stack = new Int32Array(edges);
      this.addedAt = new Int32Array(n).fill(-1);
      this.step = 0;
    }
    let current = this.current;
    let following = this.following;
    let live = this.addClosure(current, 0, this.start, this.newStep());
    for (let i = 0; i < path.length && live > 0; ) {
      const c = path.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      const step = this.newStep();
      let nextLive = 0;
      for (let k = 0; k < live; k++) {
        const s = current[k];
        switch (this.kind[s]) {
          case CHAR:
            if (this.arg[s] === c) nextLive = this.addClosure(following, nextLive, this.next[s], step);
            break;
          case ANY_CHAR:
            nextLive = this.addClosure(following, nextLive, this.next[s], step);
            break;
          case CLASS:
            if (this.inClass(this.arg[s], c)) nextLive = this.addClosure(following, nextLive, this.next[s], step);
            break;
          case STAR_LOOP:
            nextLive = this.addClosure(following, nextLive, s, step);
            break;
          // FORK never sits in a list (its targets do); MATCH consumes nothing.
        }
      }
      const swap = current;
      current = following;
      following = swap;
      live = nextLive;
    }
    for (let k = 0; k < live; k++) if (this.kind[current[k]] === MATCH) return true;
    return false;
  }

  private newStep(): number {
    if (this.step === 0x7fffffff) {
      this.addedAt.fill(-1);
      this.step = 0;
    }
    return ++this.step;
  }

  /**
   * Adds `from` and every state reachable from it without consuming (forks, the way out of a
   * star) to `list[0..live)`; returns the new length.
   */
  private addClosure(list: Int32Array, live: number, from: number, step: number): number {
    const stack = this.stack;
    let top = 0;
    stack[top++] = from;
    while (top > 0) {
      const s = stack[--top];
      if (this.addedAt[s] === step) continue;
      this.addedAt[s] = step;
      const kind = this.kind[s];
      if (kind === FORK) {
        // Pushed in reverse so targets are visited in declared order (not needed for the answer).
        const targets = this.forks[this.arg[s]];
        for (let t = targets.length - 1; t >= 0; t--) if (this.addedAt[targets[t]] !== step) stack[top++] = targets[t];
        continue;
      }
      list[live++] = s;
      if (kind === STAR_LOOP && this.addedAt[this.next[s]] !== step) stack[top++] = this.next[s];
    }
    return live;
  }

  private inClass(index: number, c: number): boolean {
    const { ranges, negate } = this.classes[index];
    for (let r = 0; r < ranges.length; r += 2) if (c >= ranges[r] && c <= ranges[r + 1]) return !negate;
    return negate;
  }

  private state(kind: number, arg: number, next: number): number {
    this.kind.push(kind);
    this.arg.push(arg);
    this.next.push(next);
    return this.kind.length - 1;
  }

  /**
   * The entry state of `nodes` followed by the state `then`, built back to front (so each state's
   * `next` exists when it is made). An explicit stack instead of recursion: `{` groups may nest
   * deeper than the call stack allows.
   */
  private sequence(nodes: readonly GlobNode[], then: number): number {
    interface Frame {
      readonly nodes: readonly GlobNode[];
      /** The next node to build (going backwards). */
      i: number;
      /** Entry of nodes[i + 1 ..] followed by `then`. */
      entry: number;
      /** While nodes[i] is a group: its branches' entries, filled in as each is built. */
      branches: number[] | null;
      readonly parent: Frame | null;
      readonly slot: number;
    }
    let result = then;
    const stack: Frame[] = [{ nodes, i: nodes.length - 1, entry: then, branches: null, parent: null, slot: 0 }];
    while (stack.length > 0) {
      const f = stack[stack.length - 1];
      if (f.branches !== null) {
        // Every branch of the group at nodes[i] is built (their frames sat above this one).
        this.forks.push(f.branches);
        f.entry = this.state(FORK, this.forks.length - 1, -1);
        f.branches = null;
        f.i--;
        continue;
      }
      if (f.i < 0) {
        stack.pop();
        if (f.parent !== null) f.parent.branches![f.slot] = f.entry;
        else result = f.entry;
        continue;
      }
      const node = f.nodes[f.i];
      switch (node.kind) {
        case 'char':
          f.entry = this.state(CHAR, node.cp, f.entry);
          break;
        case 'any':
          f.entry = this.state(ANY_CHAR, 0, f.entry);
          break;
        case 'star':
          f.entry = this.state(STAR_LOOP, 0, f.entry);
          break;
        case 'class':
          this.classes.push(node);
          f.entry = this.state(CLASS, this.classes.length - 1, f.entry);
          break;
        case 'alt': {
          const n = node.branches.length;
          f.branches = new Array<number>(n);
          for (let b = 0; b < n; b++) {
            const branch = node.branches[b];
            stack.push({ nodes: branch, i: branch.length - 1, entry: f.entry, branches: null, parent: f, slot: b });
          }
          continue; // f.i moves on once the branches are built
        }
      }
      f.i--;
    }
    return result;
  }
}

/**
 * The literal pieces of a pattern made of literals and `*` only (`a*b*c` → a, b, c; `*x` → "", x),
 * or null. Literals holding a UTF-16 surrogate are left to the automaton: a string search could
 * find half of a surrogate pair, which is not a code point of the path.
 */
function literalPieces(nodes: readonly GlobNode[]): string[] | null {
  const pieces: string[] = [];
  let piece = '';
  for (const node of nodes) {
    if (node.kind === 'star') {
      pieces.push(piece);
      piece = '';
    } else if (node.kind === 'char' && (node.cp < 0xd800 || (node.cp > 0xdfff && node.cp <= 0xffff))) {
      piece += String.fromCharCode(node.cp);
    } else {
      return null;
    }
  }
  pieces.push(piece);
  return pieces;
}

/** Whether `path` is pieces[0] * pieces[1] * ... * pieces[last] (see literalPieces). */
function matchPieces(pieces: readonly string[], path: string): boolean {
  const last = pieces.length - 1;
  if (last === 0) return path === pieces[0];
  const head = pieces[0];
  const tail = pieces[last];
  const end = path.length - tail.length;
  if (end < head.length || !path.startsWith(head) || !path.endsWith(tail)) return false;
  let at = head.length;
  for (let k = 1; k < last; k++) {
    const found = path.indexOf(pieces[k], at);
    if (found < 0) return false;
    at = found + pieces[k].length;
    if (at > end) return false;
  }
  return true;
}
