/**
 * email_matches (src/auth/email-match.ts, src/config/email-pattern.ts): patterns that backtrack exponentially (bounded counts too) are refused at
 * start, ordinary ones accepted; emails are matched unanchored (as Flipt) and bounded in length,
 * so hostile emails complete quickly.
 */
import t from 'tap';
import { MAX_EMAIL_LENGTH, compileEmailMatches, emailPatternProblem, emailProblem } from '../../src/auth/email-match.js';
import { loadConfig } from '../../src/config/load.js';

t.test('patterns: nested repetition refused, ordinary ones accepted', async (t) => {
  for (const ok of [
    '^.*@example\\.com$',
    '@example\\.com$',
    '^[a-z0-9._%+-]+@(example|corp)\\.com$',
    '^(?:[a-z]+\\.)?[a-z]+@example\\.com$',
    '^(?<user>[a-z]+)@example\\.com$',
    '^[(+*)]+@x$',
    '^\\(a+\\)+$',
    '^(ab){2,5}@x$',
    '^a{2,}@x$',
    '^[a-z]+(\\.[a-z]+)?@x$',
    '^(a|b){1}@x$',
    '^(a+){0,1}@x$',
    '^a{1,900}@x$',
  ]) {
    t.equal(emailPatternProblem(ok), undefined, `${ok} accepted`);
  }
  // Bounded counts nest as badly: (a{1,30}){1,30} tries up to 30^30 splits of a failing email.
  const bounded = ['^(a{1,30}){1,30}$', '^(a|aa){2,30}$', '^(a+){3}$', '^(?:a?){1,30}b$', '^((a{2})?){5}$', '^(x(a|b)){2}$'];
  for (const bad of ['^(a+)+$', '^(a|a)*$', '^(\\w+\\.)*@x$', '^((ab)*)+$', '^(a*){2,}$', '^(?:a|b)+x(c+)*$', ...bounded]) {
    t.match(emailPatternProblem(bad), /backtrack exponentially/, `${bad} refused`);
  }
  t.match(emailPatternProblem('^(a$'), /invalid regular expression/);
  const long = 'ab?'.repeat(350_000);
  t.equal(emailPatternProblem(long), undefined, 'a 1 MB pattern is checked in one pass');
});

t.test('emails: unanchored like Flipt, bounded length', async (t) => {
  const m = compileEmailMatches(['@example\\.com$']);
  t.equal(emailProblem('alice@example.com', m), undefined);
  t.equal(emailProblem('alice@example.com.evil', m), 'email does not match email_matches');
  t.equal(emailProblem(undefined, m), 'no email claim');
  t.equal(emailProblem('x', []), undefined, 'no patterns: every email passes');
  const polynomial = compileEmailMatches(['^.*.*.*=$']);
  t.equal(emailProblem('a'.repeat(MAX_EMAIL_LENGTH), polynomial), 'email does not match email_matches', 'the longest allowed email completes');
  t.match(emailProblem('a'.repeat(1_000_000), polynomial), /longer than 254/, 'a 1 MB email is refused without matching');
});

t.test('the config rule names the key', async (t) => {
  t.throws(
    () => loadConfig({ env: { VEXIL_AUTHENTICATION_METHODS_OIDC_EMAIL_MATCHES: '^(a+)+@x$' } }),
    /authentication\.methods\.oidc\.email_matches\.0: a repeated group that itself repeats/,
  );
});
