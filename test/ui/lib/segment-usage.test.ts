/**
 * "Used by" on the segment page (src/ui/lib/segment-usage.ts), read from the real evaluation
 * snapshot document of the examples' `default` namespace (the document the server serves at
 * /internal/v1/evaluation/snapshot/namespace/default), so the shape it reads is the one served.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { snapshotDocument } from '../../../src/server/client-snapshot/document.js';
import { segmentUses } from '../../../src/ui/lib/segment-usage.js';
import { loadIntoVexil } from '../../oracle/run.js';

const files = ['default.features.yml', 'segments.features.yml'].map((name) => ({
  path: name,
  text: readFileSync(new URL(`../../../examples/${name}`, import.meta.url), 'utf8'),
}));
const loaded = loadIntoVexil(files);
if (loaded.snapshot === undefined) throw new Error(`examples do not load: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
// Through JSON, as the page receives it.
const doc = JSON.parse(JSON.stringify(snapshotDocument(loaded.snapshot.namespaces.get('default')!)));

t.test('a segment used by a variant rule and a boolean rollout', async (t) => {
  t.same(segmentUses(doc, 'internal-users'), [
    { flagKey: 'color-theme', flagName: 'Color theme', where: 'rule 1' },
    { flagKey: 'new-search', flagName: 'New search', where: 'rollout 1' },
  ]);
});

t.test('a segment in several rules of several flags, and in a multi-segment rule', async (t) => {
  t.same(segmentUses(doc, 'beta-testers'), [
    { flagKey: 'color-theme', flagName: 'Color theme', where: 'rule 2' },
    { flagKey: 'legacy-dashboard', flagName: 'Legacy dashboard', where: 'rule 1' },
  ]);
  t.same(segmentUses(doc, 'early-adopters'), [{ flagKey: 'color-theme', flagName: 'Color theme', where: 'rule 3' }]);
});

t.test('an unused or unknown segment', async (t) => {
  t.same(segmentUses(doc, 'no-such-segment'), []);
});
