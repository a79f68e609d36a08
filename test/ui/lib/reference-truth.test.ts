/** Whether a viewed reference is served as its name says (src/ui/lib/reference-truth.ts). */
import t from 'tap';
import { noValidStateReference, referenceTruth, statusHref, truthHeading, truthSentence } from '../../../src/ui/lib/reference-truth.js';

const good = 'a'.repeat(40);
const bad = 'b'.repeat(40);
const problem = { severity: 'error', rule: 'yaml.syntax', file: 'default.features.yml', line: 30, column: 14, message: 'Nested mappings are not allowed' };
const warning = { ...problem, severity: 'warning', line: 3, message: 'just a warning' };
const snapshots = {
  defaultReference: 'main',
  references: [
    { reference: 'main', default: true, revision: { id: good }, lastRejected: { revision: { id: bad, meta: { author: 'Grace Hopper' } }, problems: [warning, problem] } },
    { reference: 'feature', revision: { id: good } },
    { reference: 'new/thing', lastRejected: { revision: { id: bad }, problems: [problem] } },
    { reference: 'polled', revision: { id: good }, stale: 'not confirmed by the source for 10 min' },
  ],
};

t.test('a reference whose newest commit was rejected: served and rejected commit, author, first error', async (t) => {
  const truth = referenceTruth(snapshots, 'main');
  t.same(truth, {
    kind: 'rejected',
    reference: 'main',
    served: 'aaaaaaa',
    rejected: 'bbbbbbb',
    author: 'Grace Hopper',
    problem: 'default.features.yml:30:14 Nested mappings are not allowed',
    statusHref: '/ui/status#ref-main',
  });
  t.same(referenceTruth(snapshots, undefined), truth, 'no ref in the address: the default reference');
  t.same(referenceTruth(snapshots, ''), truth);
  t.equal(truthHeading(truth!), 'main: newest commit rejected');
  t.equal(truthSentence(truth!), 'The newest commit of main, bbbbbbb by Grace Hopper, was rejected; this page shows aaaaaaa, its last valid commit.');
});

t.test('never valid, stale, fine, unknown', async (t) => {
  const never = referenceTruth(snapshots, 'new/thing');
  t.same(never, { kind: 'never-valid', reference: 'new/thing', rejected: 'bbbbbbb', problem: 'default.features.yml:30:14 Nested mappings are not allowed', statusHref: '/ui/status#ref-new_thing' });
  t.match(truthSentence(never!), /^new\/thing has no valid state: its commit bbbbbbb was rejected/, 'no author: no "by"');
  t.equal(truthHeading(never!), 'new/thing was never valid');
  const stale = referenceTruth(snapshots, 'polled');
  t.same(stale, { kind: 'stale', reference: 'polled', served: 'aaaaaaa', why: 'not confirmed by the source for 10 min', statusHref: '/ui/status#ref-polled' });
  t.match(truthSentence(stale!), /this page shows aaaaaaa.*\(not confirmed by the source for 10 min\)/);
  t.equal(referenceTruth(snapshots, 'feature'), undefined, 'served as its name says');
  t.equal(referenceTruth(snapshots, good), undefined, 'a commit id the server does not list');
  t.equal(referenceTruth(undefined, 'main'), undefined, 'status not loaded yet');
  const noProblems = { defaultReference: 'x', references: [{ reference: 'x', revision: { id: good }, lastRejected: { revision: { id: bad }, problems: [] } }] };
  t.equal(referenceTruth(noProblems, 'x')?.kind, 'rejected');
  t.notOk('problem' in referenceTruth(noProblems, 'x')!, 'no problem listed: none quoted');
});

t.test('the store\'s "has no valid state" refusal', async (t) => {
  t.equal(noValidStateReference({ status: 400, message: 'reference "feature/x" has no valid state: default.features.yml:30:14: error yaml.syntax: …' }), 'feature/x');
  t.equal(noValidStateReference({ status: 400, message: 'reference "main" has no valid state' }), 'main');
  t.equal(noValidStateReference({ status: 404, message: 'reference "main" has no valid state' }), undefined, 'only the 400');
  t.equal(noValidStateReference({ status: 400, message: 'bad request' }), undefined);
  t.equal(statusHref('a b'), '/ui/status#ref-a_b');
});
