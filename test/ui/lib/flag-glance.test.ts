/**
 * The flags list's "what does it serve" (src/ui/lib/flag-glance.ts) against the real evaluator:
 * the state of test/ui/fixtures/glance/ is loaded, the outline is the one the server serves
 * (src/server/outline/answer.ts), and every boolean flag is evaluated for 400 sample entities
 * (every other one in segment `staff`). "True" / "False" must be what every sampled entity gets;
 * "varies" must be seen varying. Variant flags: the default variant and the number of rules.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { evaluateBoolean } from '../../../src/evaluation/boolean.js';
import { evaluateVariant } from '../../../src/evaluation/variant.js';
import { namespaceOutline } from '../../../src/server/outline/answer.js';
import { booleanGlance, flagGlance, matchesEveryone, setWords } from '../../../src/ui/lib/flag-glance.js';
import { loadIntoVexil } from '../../oracle/run.js';

const text = readFileSync(new URL('../fixtures/glance/glance.features.yml', import.meta.url), 'utf8');
const loaded = loadIntoVexil([{ path: 'glance.features.yml', text }]);
if (loaded.snapshot === undefined) throw new Error(`fixture does not load: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
const snapshot = loaded.snapshot;
// Through JSON, as the page receives it.
const outline = JSON.parse(JSON.stringify(namespaceOutline(snapshot, 'glance'))) as ReturnType<typeof namespaceOutline>;
const everyone = new Set(outline.everyoneSegments);
const ns = snapshot.namespaces.get('glance')!;
const samples = Array.from({ length: 400 }, (_, i) => ({ entityId: `user-${i}`, context: (i % 2 === 0 ? { team: 'staff' } : {}) as Record<string, string> }));

function glanceOf(key: string) {
  const f = ns.flags.get(key)!;
  const o = outline.flags.find((x) => x.key === key);
  const dv = f.variants.find((v) => v.default);
  return flagGlance({ type: f.type, enabled: f.enabled, defaultVariant: dv ? { key: dv.key } : undefined }, o, everyone)!;
}

const expected: Record<string, string> = {
  'on-plain': 'True',
  'off-plain': 'False',
  'off-staff-and-quarter': 'varies',
  'off-all-hundred': 'True',
  'on-everyone-false': 'False',
  'on-zero': 'True',
  'on-staff-true': 'True',
  'on-and-staff': 'varies',
  'on-or-everyone': 'False',
};

t.test('every boolean flag: the glance agrees with the evaluator over the sample', async (t) => {
  for (const [key, label] of Object.entries(expected)) {
    const g = glanceOf(key);
    t.equal(g.label, label, `${key} reads ${label}`);
    const seen = new Set(samples.map((s) => evaluateBoolean(snapshot, { namespaceKey: 'glance', flagKey: key, ...s }).enabled));
    if (g.kind !== 'boolean') throw new Error('boolean expected');
    if (g.serves === 'varies') t.equal(seen.size, 2, `${key}: the sample gets both values`);
    else t.same([...seen], [g.serves === 'true'], `${key}: every sampled entity gets ${g.label}`);
  }
});

t.test('a disabled flag whose rollouts turn it on for staff and 25% says so, not "disabled"', async (t) => {
  const g = glanceOf('off-staff-and-quarter');
  t.equal(g.detail, 'True for segment staff, then True for 25% of entities; else False');
  t.equal(glanceOf('on-everyone-false').detail, 'False for every entity');
});

t.test('variant flags: the default variant and the number of rules; disabled serves the default to all', async (t) => {
  t.match(glanceOf('colour'), { kind: 'variant', label: 'red', detail: '1 rule, else red', rules: 1 });
  t.match(glanceOf('colour-off'), { kind: 'variant', label: 'red', detail: 'disabled: red for every entity' });
  t.match(glanceOf('colour-no-default'), { kind: 'variant', label: 'no variant', detail: 'no rules: no variant for anyone', rules: 0 });
  // Checked against the evaluator too.
  const staff = evaluateVariant(snapshot, { namespaceKey: 'glance', flagKey: 'colour', entityId: 'u', context: { team: 'staff' } });
  const other = evaluateVariant(snapshot, { namespaceKey: 'glance', flagKey: 'colour', entityId: 'u', context: {} });
  t.equal(staff.variantKey, 'blue');
  t.equal(other.variantKey, 'red');
  const off = evaluateVariant(snapshot, { namespaceKey: 'glance', flagKey: 'colour-off', entityId: 'u', context: { team: 'staff' } });
  t.same([off.variantKey, off.reason], ['red', 'FLAG_DISABLED_EVALUATION_REASON'], 'a disabled variant flag serves its default');
});

t.test('segment sets in words; who is in every entity', async (t) => {
  t.equal(setWords({ segments: [], operator: 'AND' }), 'every entity');
  t.equal(setWords({ segments: [], operator: 'OR' }), 'no entity');
  t.equal(setWords({ segments: ['a', 'b'], operator: 'AND' }), 'segments a AND b');
  t.ok(matchesEveryone({ segments: [], operator: 'AND' }, new Set()));
  t.notOk(matchesEveryone({ segments: [], operator: 'OR' }, new Set()));
  t.notOk(matchesEveryone({ segments: ['a', 'e'], operator: 'AND' }, new Set(['e'])));
  t.ok(matchesEveryone({ segments: ['a', 'e'], operator: 'OR' }, new Set(['e'])));
});

t.test('more than two rollouts are counted, not listed', async (t) => {
  const g = booleanGlance(
    false,
    [
      { rank: 1, value: true, percentage: 10 },
      { rank: 2, value: true, segments: ['a'], operator: 'OR' },
      { rank: 3, value: true, segments: ['b'], operator: 'OR' },
      { rank: 4, value: true, segments: ['c'], operator: 'OR' },
    ],
    new Set(),
  );
  t.equal(g.detail, 'True for 10% of entities, then True for segment a, then 2 more rollouts; else False');
});
