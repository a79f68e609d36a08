/** The status page's words (src/ui/lib/status-text.ts). */
import t from 'tap';
import {
  checkChanges,
  checkRefusedText,
  checkResultText,
  isProblem,
  problemsFirst,
  referenceState,
  statusSummary,
  whenText,
} from '../../../src/ui/lib/status-text.js';

t.test('times', async (t) => {
  const now = Date.parse('2026-11-26T14:43:13Z');
  t.equal(whenText('2026-11-26T14:38:13.123Z', now), '2026-11-26 14:38:13 UTC (5 min ago)');
  t.equal(whenText('2026-11-26T15:38:13+01:00', now), '2026-11-26 14:38:13 UTC (5 min ago)', 'any offset, shown in UTC');
  t.equal(whenText(undefined, now), '');
  t.equal(whenText('yesterday', now), 'yesterday', 'as given when not a time');
});

const rev = (id: string) => ({ id });
const bad = { revision: rev('b'.repeat(40)) };

t.test('states: an older revision served is not "nothing served"', async (t) => {
  t.equal(referenceState({ revision: rev('a'), lastRejected: bad, stale: 'x' }), 'older revision served');
  t.equal(referenceState({ lastRejected: bad }), 'nothing served', 'never valid');
  t.equal(referenceState({ lastError: { message: 'unreachable' } }), 'nothing served', 'never read');
  t.equal(referenceState({ revision: rev('a'), lastError: { message: 'unreachable' } }), 'check failed');
  t.equal(referenceState({ revision: rev('a'), stale: 'x' }), 'stale');
  t.equal(referenceState({ revision: rev('a') }), 'ok');
  t.equal(referenceState({}), 'not loaded');
  t.ok(isProblem('nothing served'));
  t.ok(isProblem('stale'));
  t.notOk(isProblem('ok'));
  t.notOk(isProblem('not loaded'));
});

t.test('problems first, worst first, then in the order given', async (t) => {
  const refs = [
    { reference: 'main', default: true, revision: rev('a') },
    { reference: 'a-ok', revision: rev('a') },
    { reference: 'b-stale', revision: rev('a'), stale: 'x' },
    { reference: 'c-older', revision: rev('a'), lastRejected: bad },
    { reference: 'd-never', lastRejected: bad },
    { reference: 'e-older', revision: rev('a'), lastRejected: bad },
  ];
  t.same(
    problemsFirst(refs).map((r) => r.reference),
    ['d-never', 'c-older', 'e-older', 'b-stale', 'main', 'a-ok'],
  );
  t.equal(statusSummary(refs), '6 references: 1 serves nothing, 2 serve an older revision (the newest was rejected), 1 stale.');
  t.equal(statusSummary([{ revision: rev('a') }, {}]), '2 references, no problems.');
  t.equal(statusSummary([{ revision: rev('a'), lastError: { message: 'x' } }]), '1 reference: 1 could not be checked.');
  t.equal(statusSummary(Array.from({ length: 3000 }, () => ({ revision: rev('a') }))), '3,000 references, no problems.');
});

t.test('what a check changed', async (t) => {
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  const c = 'c'.repeat(40);
  const before = [
    { reference: 'main', revision: rev(a) },
    { reference: 'feature', revision: rev(a) },
    { reference: 'gone', revision: rev(a) },
  ];
  t.same(checkChanges(before, before.slice()), [], 'nothing changed');
  t.same(
    checkChanges(before, [
      { reference: 'main', revision: rev(b) },
      { reference: 'feature', revision: rev(a), lastRejected: { revision: rev(c) } },
      { reference: 'never', lastRejected: { revision: rev(c) } },
      { reference: 'down', revision: rev(a), lastError: { message: 'connection refused' } },
    ]),
    [
      'main: now serves bbbbbbb (was aaaaaaa).',
      'feature: ccccccc was rejected; aaaaaaa is still served.',
      'never: ccccccc was rejected; nothing is served.',
      'down: now serves aaaaaaa.',
      'down: could not be checked (connection refused).',
      'gone: no longer kept.',
    ],
  );
  const at = Date.parse('2026-11-26T14:38:13.5Z');
  t.equal(checkResultText(at, []), 'Checked at 2026-11-26 14:38:13 UTC: no change, every reference serves what it served before.');
  t.equal(checkResultText(at, ['main: now serves bbbbbbb (was aaaaaaa).']), 'Checked at 2026-11-26 14:38:13 UTC: main: now serves bbbbbbb (was aaaaaaa).');
  t.match(checkRefusedText(401, 'request was not authenticated'), /sign-in has expired or the token was revoked\. Sign in again/);
  t.match(checkRefusedText(403, 'token is scoped to namespace "x"'), /may not ask it to \(token is scoped to namespace "x"\)/);
  t.match(checkRefusedText(0, ''), /cannot be reached/);
  t.match(checkRefusedText(503, 'overloaded'), /503: overloaded/);
});
