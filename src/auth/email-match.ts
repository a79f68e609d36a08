/**
 * `authentication.methods.oidc.email_matches`: regular expressions an OIDC login's email must
 * match (one of them). Run unanchored, as Flipt runs them (Go's MatchString): write `^...$` to
 * match a whole address.
 *
 * Flipt's patterns are RE2, which never backtracks; JavaScript's engine does. Two bounds keep a
 * match cheap whatever email a provider returns:
 * - the email is at most MAX_EMAIL_LENGTH characters (longer ones are refused unmatched);
 * - a pattern whose repeated group itself repeats or alternates (`(a+)+`, `(\w|\d)*`), the shape
 *   that backtracks exponentially, is refused at start. Such a pattern can always be written
 *   without the nesting (`a+`, `[\w\d]*`).
 */

/** RFC 5321: the longest address a mail path carries. */
export const MAX_EMAIL_LENGTH = 254;

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
    const braces = c === '{' ? /^\{\d+(,\d*)?\}/.exec(pattern.slice(i, i + 24)) : null;
    const unbounded = c === '*' || c === '+' || (braces !== null && braces[0].endsWith(',}'));
    const quantifier = unbounded || c === '?' || braces !== null;
    if (quantifier) {
      if (unbounded && lastClosedRisky) return 'a repeated group that itself repeats or alternates may backtrack exponentially; write it without the nesting';
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

/** Compiles the patterns (already checked at start by the config rules). */
export function compileEmailMatches(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => new RegExp(p));
}

/** Why an email is refused under `email_matches`, or undefined when it passes. */
export function emailProblem(email: string | undefined, matchers: readonly RegExp[]): string | undefined {
  if (matchers.length === 0) return undefined;
  if (email === undefined || email === '') return 'no email claim';
  if (email.length > MAX_EMAIL_LENGTH) return `email longer than ${MAX_EMAIL_LENGTH} characters`;
  return matchers.some((m) => m.test(email)) ? undefined : 'email does not match email_matches';
}
