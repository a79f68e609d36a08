/**
 * The config rule for `authentication.methods.oidc.email_matches` patterns (src/auth/email-match.ts
 * runs them on JavaScript's backtracking engine; Flipt's RE2 never backtracks). A pattern whose
 * repeated group itself repeats or alternates (`(a+)+`, `(\w|\d)*`, `(a{1,30}){1,30}`: a count
 * above one, bounded or not, over any quantifier or alternation), the shape that backtracks
 * exponentially, is refused. Such a pattern can always be written without the nesting (`a+`,
 * `[\w\d]*`, `a{1,900}`). An optional group (`(\.[a-z]+)?`) is not a repetition. Pure, one pass.
 */

/** Why a pattern is refused, or undefined. One pass over the pattern (linear). */
export function emailPatternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
  } catch (err) {
    return `invalid regular expression: ${(err as Error).message}`;
  }
  // For each open group: whether it holds a quantifier or an alternation so far.
  const groups: Array<{ risky: boolean }> = [];
  let lastClosedRisky = false;
  let i = 0;
  const markRisky = () => {
    if (groups.length > 0) groups[groups.length - 1]!.risky = true;
  };
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      i += 2;
      lastClosedRisky = false;
      continue;
    }
    if (c === '[') {
      // A character class: skip to its unescaped end.
      i++;
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') i++;
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      i++;
      lastClosedRisky = false;
      continue;
    }
    if (c === '(') {
      groups.push({ risky: false });
      i++;
      // Group modifiers are not quantifiers: (?:  (?=  (?!  (?<=  (?<!  (?<name>
      if (pattern[i] === '?') {
        const next = pattern[i + 1];
        if (next === ':' || next === '=' || next === '!') i += 2;
        else if (next === '<' && (pattern[i + 2] === '=' || pattern[i + 2] === '!')) i += 3;
        else if (next === '<') {
          const end = pattern.indexOf('>', i);
          i = end < 0 ? pattern.length : end + 1;
        }
      }
      continue;
    }
    if (c === ')') {
      const g = groups.pop();
      lastClosedRisky = g?.risky ?? false;
      // What the group held, its parent holds too.
      if (lastClosedRisky) markRisky();
      i++;
      continue;
    }
    if (c === '|') {
      markRisky();
      i++;
      lastClosedRisky = false;
      continue;
    }
    const braces = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24)) : null;
    const quantifier = c === '*' || c === '+' || c === '?' || braces !== null;
    if (quantifier) {
      // Whether it may match more than once: bounded counts ({1,30}) nest as badly as * and +.
      const repeats = braces === null ? c !== '?' : braces[2] === undefined ? Number(braces[1]) > 1 : braces[3] === '' || Number(braces[3]) > 1;
      if (repeats && lastClosedRisky) return 'a repeated group that itself repeats or alternates may backtrack exponentially; write it without the nesting';
      markRisky();
      lastClosedRisky = false;
      i++;
      continue;
    }
    lastClosedRisky = false;
    i++;
  }
  return undefined;
}
