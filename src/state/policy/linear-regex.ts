/**
 * The patterns of a policy file (metadata values, flag and segment keys) as a linear-time regular
 * expression subset: a pattern is refused, with the reason, when it uses what needs backtracking
 * (back-references `\1` `\k<name>`, lookahead `(?=` `(?!`, lookbehind `(?<=` `(?<!`), or is over
 * MAX_PATTERN_LENGTH characters. The rest is JavaScript's syntax (without the Unicode flag).
 *
 * Matching runs on V8's linear-time engine (the `l` flag, an automaton without backtracking), so
 * `(a+)+$` costs as much as `a+$`: no input makes it slow. Where the running V8 lacks that engine,
 * the pattern runs on the ordinary engine with one more refusal, a quantifier applied to a group
 * that holds a quantifier or `|` (the nesting behind catastrophic backtracking). Either way inputs
 * are bounded: a value over MAX_SUBJECT_LENGTH characters is reported as not matching, unread.
 */
import v8 from 'node:v8';

export const MAX_PATTERN_LENGTH = 512;
export const MAX_SUBJECT_LENGTH = 1024;

export interface LinearRegex {
  readonly source: string;
  /** Whether `subject` matches; false for a subject over MAX_SUBJECT_LENGTH. */
  test(subject: string): boolean;
}

let linearEngine: boolean | undefined;

/** Whether V8's linear-time engine is available (turned on once; it only adds the `l` flag). */
function hasLinearEngine(): boolean {
  if (linearEngine !== undefined) return linearEngine;
  try {
    v8.setFlagsFromString('--enable-experimental-regexp-engine');
    new RegExp('a', 'l');
    linearEngine = true;
  } catch {
    linearEngine = false;
  }
  return linearEngine;
}

/** The compiled pattern, or why it is refused (one sentence). */
export function compileLinear(pattern: string): LinearRegex | { refused: string } {
  if (pattern.length > MAX_PATTERN_LENGTH) return { refused: `the pattern is ${pattern.length} characters long (at most ${MAX_PATTERN_LENGTH})` };
  const unsafe = unsafeConstruct(pattern, !hasLinearEngine());
  if (unsafe !== undefined) return { refused: unsafe };
  let re: RegExp;
  try {
    re = new RegExp(pattern, hasLinearEngine() ? 'l' : '');
  } catch (err) {
    return { refused: (err as Error).message.replace(/^Invalid regular expression: /, 'not a valid pattern: ') };
  }
  return {
    source: pattern,
    test: (subject) => subject.length <= MAX_SUBJECT_LENGTH && re.test(subject),
  };
}

/**
 * The first construct outside the subset, described; undefined when there is none. A scan over the
 * pattern that skips escaped characters and character classes (`[(?=]` is three characters).
 * `nesting`: also refuse a quantified group holding a quantifier or `|`.
 */
export function unsafeConstruct(pattern: string, nesting: boolean): string | undefined {
  // Per open group: whether it holds a quantifier or an alternation so far.
  const groups: boolean[] = [];
  let lastGroupRisky = false;
  let lastWasGroup = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const wasGroup = lastWasGroup;
    lastWasGroup = false;
    if (c === '\\') {
      const n = pattern[i + 1] ?? '';
      if (/[1-9]/.test(n)) return `back-reference \`\\${n}\` at character ${i + 1} needs backtracking`;
      if (n === 'k' && pattern[i + 2] === '<') return `named back-reference \`\\k<\` at character ${i + 1} needs backtracking`;
      i++;
      continue;
    }
    if (c === '[') {
      // Skip the class: up to the first unescaped `]` (a `]` right after `[` or `[^` is literal).
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      i = j;
      continue;
    }
    if (c === '(') {
      const head = pattern.slice(i, i + 4);
      if (head.startsWith('(?=') || head.startsWith('(?!')) return `lookahead \`${head.slice(0, 3)}\` at character ${i + 1} needs backtracking`;
      if (head.startsWith('(?<=') || head.startsWith('(?<!')) return `lookbehind \`${head}\` at character ${i + 1} needs backtracking`;
      groups.push(false);
      continue;
    }
    if (c === ')') {
      lastGroupRisky = groups.pop() ?? false;
      if (lastGroupRisky && groups.length > 0) groups[groups.length - 1] = true;
      lastWasGroup = true;
      continue;
    }
    if (c === '|' || c === '*' || c === '+' || c === '?' || c === '{') {
      if (groups.length > 0) groups[groups.length - 1] = true;
      const quantifier = c !== '|' && !(c === '?' && pattern[i - 1] === '(');
      if (nesting && quantifier && wasGroup && lastGroupRisky) {
        return `a quantifier at character ${i + 1} repeats a group that holds a quantifier or \`|\` (nested repetition needs backtracking)`;
      }
    }
  }
  return undefined;
}
