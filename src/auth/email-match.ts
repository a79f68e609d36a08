/**
 * `authentication.methods.oidc.email_matches`: regular expressions an OIDC login's email must
 * match (one of them). Run unanchored, as Flipt runs them (Go's MatchString): write `^...$` to
 * match a whole address.
 *
 * Flipt's patterns are RE2, which never backtracks; JavaScript's engine does. Two bounds keep a
 * match cheap whatever email a provider returns:
 * - the email is at most MAX_EMAIL_LENGTH characters (longer ones are refused unmatched);
 * - patterns that may backtrack exponentially are refused at start by the config rule of
 *   src/config/email-pattern.ts (re-exported here).
 */
export { emailPatternProblem } from '../config/email-pattern.js';

/** RFC 5321: the longest address a mail path carries. */
export const MAX_EMAIL_LENGTH = 254;

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
