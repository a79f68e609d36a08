/**
 * The diff page's words and address (src/ui/lib/diff-text.ts), fed with a real report: the one
 * assembly GET /api/v1/diff answers (diffReport) over the diff fixtures (a rollout moved 50 → 60,
 * a flag added, one removed, a segment changed), with the impact over 2,000 synthetic entities.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { syntheticSample } from '../../../src/diff/impact.js';
import { formatMarkdown } from '../../../src/diff/format-markdown.js';
import { diffReport } from '../../../src/diff/report.js';
import {
  sampleText,
  DEFAULT_IMPACT,
  changeText,
  diffApiQuery,
  diffEntries,
  diffMarkdown,
  diffQuery,
  diffSetupError,
  entryLine,
  entryStatusText,
  filterCounts,
  flagSummaryLines,
  guardText,
  guardsHeadline,
  impactByFlag,
  matchesFilter,
  impactHeadline,
  namespaceSummaries,
  overallText,
  parseDiffQuery,
  transitionShare,
  viaSegmentText,
  type DiffReport,
} from '../../../src/ui/lib/diff-text.js';
import { snapshotOf } from '../../diff/state.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/diff/', import.meta.url));
const base = snapshotOf(readFileSync(join(FIXTURES, 'base/features.yml'), 'utf8'), 'main');
const head = snapshotOf(readFileSync(join(FIXTURES, 'head/features.yml'), 'utf8'), 'feature');
const asReceived = (r: unknown) => JSON.parse(JSON.stringify(r)) as DiffReport;

t.test('summary, changes and impact of a real report', async (t) => {
  const report = asReceived(diffReport(base, head, { impact: { sample: syntheticSample(2000, []), source: 'synthetic', contexts: 0 } }));
  t.equal(overallText(report), '1 flag added, 1 flag removed, 2 flags changed, 1 segment changed.');
  t.same(namespaceSummaries(report), [
    { namespace: 'default', status: 'changed', flags: { added: 1, removed: 1, changed: 2 }, segments: { added: 0, removed: 0, changed: 1 } },
  ]);
  const pay = report.namespaces[0]!.flags.find((f) => f.key === 'payment-provider')!;
  const words = pay.changes.map(changeText);
  t.ok(words.includes('rule 2: adyen 50% → 60%'), words.join(' | '));
  t.ok(words.includes('rule 2: stripe 50% → 40%'));
  const impacts = impactByFlag(report);
  const i = impacts.get('default/payment-provider')!;
  t.match(impactHeadline(i), /^\d+\.\d% of 2,000 entities move stripe → adyen$/);
  t.same(i.transitions.map((x) => [x.from, x.to]), [['stripe', 'adyen']]);
  t.equal(entryStatusText('added', 'flag'), 'New flag (only in head).');
  t.equal(entryStatusText('removed', 'segment'), 'Removed segment (only in base).');
});

t.test('no differences', async (t) => {
  const same = asReceived(diffReport(base, base, {}));
  t.equal(overallText(same), 'No differences between base and head.');
  t.same(namespaceSummaries(same), []);
  t.equal(impactByFlag(same).size, 0);
});

t.test('impact lines', async (t) => {
  const one = { namespace: 'n', flag: 'f', evaluated: 10_000, changed: 1240, ratio: 0.124, transitions: [{ from: 'stripe', to: 'adyen', count: 1240 }] };
  t.equal(impactHeadline(one), '12.4% of 10,000 entities move stripe → adyen');
  const two = { ...one, changed: 30, ratio: 0.003, transitions: [{ from: 'a', to: 'b', count: 20 }, { from: 'b', to: 'a', count: 10 }] };
  t.equal(impactHeadline(two), '0.3% of 10,000 entities change outcome (2 transitions)');
  t.equal(impactHeadline({ ...one, changed: 0, ratio: 0, transitions: [] }), 'No change for 10,000 sampled entities.');
  t.same(transitionShare(1240, 10_000), { percent: '12.4%', count: '1,240' });
  t.same(transitionShare(1, 100_000), { percent: '<0.1%', count: '1' });
  t.same(transitionShare(0, 0), { percent: '0.0%', count: '0' });
});

t.test('the address and the API query', async (t) => {
  const s = parseDiffQuery(new URLSearchParams('base=main&head=feature&namespace=default&impact=500&ref=x'));
  t.same(s, { base: 'main', head: 'feature', namespace: 'default', impact: '500' });
  t.same(diffQuery(s), { base: 'main', head: 'feature', namespace: 'default', impact: '500' });
  t.same(parseDiffQuery(new URLSearchParams('')), { base: '', head: '', namespace: '', impact: String(DEFAULT_IMPACT) });
  t.same(diffApiQuery({ base: ' main ', head: 'feature', namespace: '', impact: '0' }), { base: 'main', head: 'feature', namespace: undefined, impact: undefined, policy: 'auto' }, '0 = no impact; the guards when a side has a policy');
  t.same(diffApiQuery({ base: 'a', head: 'b', namespace: 'ns', impact: '007' }), { base: 'a', head: 'b', namespace: 'ns', impact: '7', policy: 'auto' });
  t.equal(diffSetupError({ base: '', head: 'b', namespace: '', impact: '' }), 'Choose a base reference.');
  t.equal(diffSetupError({ base: 'a', head: ' ', namespace: '', impact: '' }), 'Choose a head reference.');
  for (const bad of ['-1', '1.5', 'lots', '100001', '9'.repeat(1_000_000)]) {
    t.equal(diffSetupError({ base: 'a', head: 'b', namespace: '', impact: bad }), 'Impact entities must be a whole number from 0 to 100,000.', bad.slice(0, 10));
  }
  t.equal(diffSetupError({ base: 'a', head: 'b', namespace: '', impact: '100000' }), undefined);
});

t.test('what the impact sample was', async (t) => {
  t.equal(sampleText({ source: 'synthetic', entities: 10_000, contexts: 0 }), 'Impact preview over 10,000 synthetic entities with an empty context (the head has no flag test contexts).');
  t.equal(sampleText({ source: 'synthetic', entities: 10_000, contexts: 1 }), "Impact preview over 10,000 synthetic entities, each given the one context of the head's flag test files.");
  t.equal(sampleText({ source: 'synthetic', entities: 500, contexts: 3 }), "Impact preview over 500 synthetic entities, each given in turn one of the 3 contexts of the head's flag test files.");
  t.equal(sampleText({ source: 'contexts-file', entities: 2, contexts: 2 }), 'Impact preview over 2 entities from a contexts file.');
});

t.test('the entries of a review: flags reached through a changed segment, filters and their counts, guards, Markdown', async (t) => {
  const yaml = (beta: string, extra: string) => `version: "1.4"
namespace: default
flags:
  - key: banner
    name: Banner
    type: BOOLEAN_FLAG_TYPE
    enabled: false
    rollouts:
      - segment: {key: beta, value: true}
${extra}segments:
  - key: beta
    name: Beta
    match_type: ALL_MATCH_TYPE
    constraints:
      - {type: STRING_COMPARISON_TYPE, property: plan, operator: isoneof, value: '${beta}'}
`;
  const b = snapshotOf(yaml('["beta","staff"]', ''), 'main');
  const h = snapshotOf(
    yaml('["beta","trial"]', '  - key: express\n    name: Express\n    type: BOOLEAN_FLAG_TYPE\n    enabled: true\n    rollouts:\n      - threshold: {percentage: 30, value: true}\n'),
    'feature',
  );
  const report = asReceived(diffReport(b, h, { impact: { sample: syntheticSample(100, []), source: 'synthetic', contexts: 0 } }));
  const [ns] = diffEntries(report);
  t.same(
    ns!.entries.map((e) => [e.what, e.key, e.status]),
    [
      ['flag', 'express', 'added'],
      ['flag', 'banner', 'via-segment'],
      ['segment', 'beta', 'changed'],
    ],
    'the flag reading the changed segment is listed though its own definition is unchanged',
  );
  const banner = ns!.entries[1]!;
  t.equal(entryLine(banner), 'reads a changed segment · no change for 100 sampled entities');
  t.equal(viaSegmentText(banner.impact!), 'Unchanged itself, it reads a changed segment: no change for 100 sampled entities.');
  t.same(ns!.entries[2]!.changes.map(changeText), ['constraint 1: plan is one of: added trial; removed staff'], 'a set change as the values added and removed');
  t.same(filterCounts(diffEntries(report)), { all: 3, changed: 1, added: 1, removed: 0, impact: 0 }, 'an added flag is not in the impact preview');
  t.notOk(matchesFilter(banner, 'impact'), 'no change in the sample: not "impact > 0"');
  t.ok(matchesFilter({ ...banner, impact: { ...banner.impact!, changed: 3, ratio: 0.03 } }, 'impact'));
  t.ok(matchesFilter(ns!.entries[0]!, 'added') && !matchesFilter(ns!.entries[0]!, 'changed'));

  // Guards beside their flags; the namespace-wide ones apart.
  const guarded: DiffReport = {
    ...report,
    guards: {
      policy: '.vexil/policy.yml',
      from: 'base',
      failed: true,
      findings: [
        { severity: 'error', rule: 'guard.protected', namespace: 'default', flag: 'banner', file: '', line: 0, column: 0, message: 'flag `default/banner` is protected', hint: 'h' },
        { severity: 'info', rule: 'guard.impact.unmeasured', file: '', line: 0, column: 0, message: 'm' },
      ],
    },
  };
  const [gns] = diffEntries(guarded);
  t.same(gns!.entries[1]!.guards.map((g) => g.rule), ['guard.protected']);
  t.equal(entryLine(gns!.entries[1]!), 'reads a changed segment · no change for 100 sampled entities · 1 guard failed');
  t.equal(guardsHeadline(guarded.guards!), 'Guards of .vexil/policy.yml (from the base): failed, 1 error, 1 other finding.');
  t.equal(guardText(guarded.guards!.findings[0]!), 'error guard.protected: flag `default/banner` is protected');

  // Copy as Markdown: the CLI's formatter, without the guards, with the impact only when asked.
  t.equal(diffMarkdown(guarded, true), formatMarkdown(report));
  const { impact: _i, ...noImpact } = report;
  t.equal(diffMarkdown(guarded, false), formatMarkdown(noImpact));
});

t.test("an added or removed flag's summary: type, enabled, one line per rule or rollout", async (t) => {
  const variant = (id: string, key: string) => ({ id, key, name: key, description: '', attachment: '' });
  const flag = {
    key: 'pay',
    name: 'Pay',
    description: '',
    enabled: true,
    namespaceKey: 'default',
    type: 'VARIANT_FLAG_TYPE' as const,
    variants: [variant('v1', 'stripe'), variant('v2', 'adyen')],
    defaultVariant: variant('v1', 'stripe'),
  };
  const rule = (rank: number, segmentKeys: string[], distributions: { variantId: string; rollout: number }[]) => ({
    id: `r${rank}`,
    rank,
    segmentKey: '',
    segmentKeys,
    segmentOperator: 'AND_SEGMENT_OPERATOR',
    distributions: distributions.map((d, i) => ({ id: `d${i}`, ...d })),
  });
  t.same(flagSummaryLines(flag, [rule(2, ['everyone'], [{ variantId: 'v1', rollout: 40 }, { variantId: 'v2', rollout: 60 }]), rule(1, ['eu', 'beta'], [])], []), [
    'Variant flag, enabled, default variant stripe; variants stripe, adyen; 2 rules.',
    'Rule 1: segments eu AND beta → a match without a variant (no distributions)',
    'Rule 2: segment everyone → stripe 40%, adyen 60%',
  ]);
  const boolean = { ...flag, type: 'BOOLEAN_FLAG_TYPE' as const, enabled: false, variants: [], defaultVariant: undefined };
  t.same(
    flagSummaryLines(boolean, [], [
      { id: 'a', rank: 1, type: 'SEGMENT_ROLLOUT_TYPE', description: '', segment: { segmentKey: 'beta', segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR', value: true } },
      { id: 'b', rank: 2, type: 'THRESHOLD_ROLLOUT_TYPE', description: '', threshold: { percentage: 25, value: true } },
    ]),
    ['Boolean flag, disabled, 2 rollouts.', 'Rollout 1: entities in segment beta → true', 'Rollout 2: 25% of entities → true', 'Everyone else → false'],
  );
});
