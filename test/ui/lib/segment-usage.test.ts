/**
 * "Used in N flags" and "used by" (src/ui/lib/segment-usage.ts), read from the real outline of the
 * examples' `default` namespace (src/server/outline/answer.ts, the document the server serves at
 * /api/v1/namespaces/default/outline), so the shape read is the one served; and the segments search.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { constraintText } from '../../../src/evaluation/constraint-words.js';
import { namespaceOutline, segmentUses } from '../../../src/server/outline/answer.js';
import { filterSegments, usageCounts, usageHeadline, whereText } from '../../../src/ui/lib/segment-usage.js';
import { loadIntoVexil } from '../../oracle/run.js';

const files = ['default.features.yml', 'segments.features.yml'].map((name) => ({
  path: name,
  text: readFileSync(new URL(`../../../examples/${name}`, import.meta.url), 'utf8'),
}));
const loaded = loadIntoVexil(files);
if (loaded.snapshot === undefined) throw new Error(`examples do not load: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
const snapshot = loaded.snapshot;
// Through JSON, as the page receives it.
const outline = JSON.parse(JSON.stringify(namespaceOutline(snapshot, 'default'))) as ReturnType<typeof namespaceOutline>;

t.test('a segment used by a variant rule and a boolean rollout', async (t) => {
  const uses = JSON.parse(JSON.stringify(segmentUses(snapshot, 'default', 'internal-users'))) as ReturnType<typeof segmentUses>;
  t.same(
    uses.map((u) => [u.key, u.name, whereText(u)]),
    [
      ['color-theme', 'Color theme', 'rule 1'],
      ['new-search', 'New search', 'rollout 1'],
    ],
  );
  t.equal(usageCounts(outline).get('internal-users'), 2);
});

t.test('a segment in several rules of several flags, and in a multi-segment rule', async (t) => {
  t.same(
    segmentUses(snapshot, 'default', 'beta-testers').map((u) => [u.key, whereText(u)]),
    [
      ['color-theme', 'rule 2'],
      ['legacy-dashboard', 'rule 1'],
    ],
  );
  t.same(segmentUses(snapshot, 'default', 'early-adopters').map((u) => [u.key, whereText(u)]), [['color-theme', 'rule 3']]);
  t.equal(usageCounts(outline).get('beta-testers'), 2);
});

t.test('a flag naming a segment in two places counts once; rule and rollout places in words', async (t) => {
  const counts = usageCounts({
    flags: [
      { key: 'a', rules: [{ segments: ['s'] }, { segments: ['s', 't'] }], rollouts: [] },
      { key: 'b', rules: [], rollouts: [{ segments: ['s'] }, {}] },
    ],
  });
  t.same([...counts], [['s', 2], ['t', 1]]);
  t.equal(whereText({ key: 'a', name: '', rules: [1, 3], rollouts: [2] }), 'rule 1, rule 3, rollout 2');
  t.equal(usageHeadline(0), 'No flag uses this segment.');
  t.equal(usageHeadline(1), '1 flag uses this segment.');
  t.equal(usageHeadline(3000), '3,000 flags use this segment.');
});

t.test('an unused segment: no count', async (t) => {
  t.equal(usageCounts(outline).get('no-such-segment'), undefined);
});

t.test('the segments search: key, name, description, constraints in words', async (t) => {
  const segments = [...snapshot.namespaces.get('default')!.segments.values()];
  const keys = (q: string) => filterSegments(segments, q, constraintText).map((s) => s.key);
  t.same(keys(''), segments.map((s) => s.key), 'no search: all');
  t.same(keys('INTERNAL'), ['internal-users']);
  t.ok(keys('zzz-nothing').length === 0);
  const byConstraint = segments.find((s) => s.constraints.length > 0)!;
  const words = constraintText(byConstraint.constraints[0]!);
  t.ok(keys(words).includes(byConstraint.key), `by constraint words "${words}"`);
});
