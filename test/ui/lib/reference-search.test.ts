/** The reference switcher's labels and search (src/ui/lib/reference-search.ts). */
import t from 'tap';
import { goTarget, matchCountText, matchReferences, referenceLabel } from '../../../src/ui/lib/reference-search.js';

const now = Date.parse('2026-11-28T12:00:00Z');
const a = 'a'.repeat(40);
const b = 'b'.repeat(40);

t.test('labels: the commit age beside the load age, the state when not ok', async (t) => {
  t.equal(
    referenceLabel({ reference: 'main', revision: { id: a, meta: { at: '2026-11-25T12:00:00Z' } }, loadedAt: '2026-11-28T11:55:00Z' }, now),
    'main · aaaaaaa · committed 3 days ago · loaded 5 min ago',
  );
  t.equal(
    referenceLabel({ reference: 'feature', revision: { id: a }, loadedAt: '2026-11-28T11:59:58Z', lastRejected: { revision: { id: b } } }, now),
    'feature · aaaaaaa · loaded just now · older revision served',
    'no commit time: only the load age',
  );
  t.equal(referenceLabel({ reference: 'never', lastRejected: { revision: { id: b } } }, now), 'never · nothing served');
  t.equal(referenceLabel({ reference: 'new' }, now), 'new · not loaded');
});

t.test('search: any case, anywhere in the name, the viewed reference kept', async (t) => {
  const refs = Array.from({ length: 300 }, (_, i) => ({ reference: `branch-${String(i).padStart(3, '0')}` })).concat([{ reference: 'main' }, { reference: 'Release/2.0' }]);
  t.equal(matchReferences(refs, '', 'main').length, 302, 'blank: all');
  t.same(
    matchReferences(refs, 'BRANCH-27', 'main').map((r) => r.reference),
    ['branch-270', 'branch-271', 'branch-272', 'branch-273', 'branch-274', 'branch-275', 'branch-276', 'branch-277', 'branch-278', 'branch-279', 'main'],
  );
  t.same(matchReferences(refs, 'release', 'branch-001').map((r) => r.reference), ['branch-001', 'Release/2.0']);
  t.equal(matchCountText(refs, ' branch-27 '), '10 of 302 references match "branch-27"');
  t.equal(matchCountText(refs, 'branch'), '300 of 302 references match "branch"');

  t.same(goTarget(refs, 'main'), { go: 'main' }, 'an exact name');
  t.same(goTarget(refs, 'release'), { go: 'Release/2.0' }, 'the one name containing it');
  t.same(goTarget(refs, 'branch-27'), { choose: 10 }, 'several: choose in the list');
  t.same(goTarget(refs, 'v1.4.0'), { go: 'v1.4.0' }, 'no listed name: any branch, tag or commit id');
  t.same(goTarget(refs, 'branch-270'), { go: 'branch-270' }, 'an exact name that is also part of none other');
  t.equal(goTarget(refs, '  '), undefined);
});
