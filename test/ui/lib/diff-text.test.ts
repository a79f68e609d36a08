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
import { diffReport } from '../../../src/diff/report.js';
import {
  sampleText,
  DEFAULT_IMPACT,
  changeText,
  diffApiQuery,
  diffQuery,
  diffSetupError,
  entryStatusText,
  impactByFlag,
  impactHeadline,
  namespaceSummaries,
  overallText,
  parseDiffQuery,
  transitionShare,
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
  t.equal(impactHeadline({ ...one, changed: 0, ratio: 0, transitions: [] }), 'No change for 10,000 entities.');
  t.same(transitionShare(1240, 10_000), { percent: '12.4%', count: '1,240' });
  t.same(transitionShare(1, 100_000), { percent: '<0.1%', count: '1' });
  t.same(transitionShare(0, 0), { percent: '0.0%', count: '0' });
});

t.test('the address and the API query', async (t) => {
  const s = parseDiffQuery(new URLSearchParams('base=main&head=feature&namespace=default&impact=500&ref=x'));
  t.same(s, { base: 'main', head: 'feature', namespace: 'default', impact: '500' });
  t.same(diffQuery(s), { base: 'main', head: 'feature', namespace: 'default', impact: '500' });
  t.same(parseDiffQuery(new URLSearchParams('')), { base: '', head: '', namespace: '', impact: String(DEFAULT_IMPACT) });
  t.same(diffApiQuery({ base: ' main ', head: 'feature', namespace: '', impact: '0' }), { base: 'main', head: 'feature', namespace: undefined, impact: undefined }, '0 = no impact');
  t.same(diffApiQuery({ base: 'a', head: 'b', namespace: 'ns', impact: '007' }), { base: 'a', head: 'b', namespace: 'ns', impact: '7' });
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
