/** The status page's words (src/ui/lib/status-text.ts). */
import t from 'tap';
import { referenceState, statusSummary, whenText } from '../../../src/ui/lib/status-text.js';

t.test('times', async (t) => {
  const now = Date.parse('2026-11-26T14:43:13Z');
  t.equal(whenText('2026-11-26T14:38:13.123Z', now), '2026-11-26 14:38:13 UTC (5 min ago)');
  t.equal(whenText('2026-11-26T15:38:13+01:00', now), '2026-11-26 14:38:13 UTC (5 min ago)', 'any offset, shown in UTC');
  t.equal(whenText(undefined, now), '');
  t.equal(whenText('yesterday', now), 'yesterday', 'as given when not a time');
});

t.test('states and the summary', async (t) => {
  t.equal(referenceState({ revision: {}, lastRejected: {}, stale: 'x' }), 'rejected');
  t.equal(referenceState({ revision: {}, stale: 'x' }), 'stale');
  t.equal(referenceState({ revision: {}, lastError: {} }), 'error');
  t.equal(referenceState({ revision: {} }), 'ok');
  t.equal(referenceState({}), 'not loaded');
  t.equal(statusSummary([{}, {}]), '2 references, none with a rejected change.');
  t.equal(statusSummary([{ lastRejected: {} }]), '1 reference, 1 with a rejected change.');
});
