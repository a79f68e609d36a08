/**
 * The checks on the state trees of the repository (Flipt's readonly integration tree, the version
 * and multi-file trees, the examples): exactly these reports, no others, and each one held against
 * evaluation over 10,000 random requests whose contexts draw on the trees' own constraint values
 * (a rule or rollout reported unreachable never decides, a variant reported unserved is never
 * served, a flag reported without effect always answers its `enabled`). The examples pass
 * `--strict`: information only.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { evaluateBoolean, evaluateVariant } from '../../../src/evaluation/index.js';
import { explain } from '../../../src/evaluation/explain.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../../src/sources/local.js';
import { readState } from '../../../src/store/read-state.js';
import { mulberry32 } from '../../support/prng.js';
import { STATE_LIMITS } from '../../support/config-defaults.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TODAY = new Date('2026-11-27T12:00:00Z');

async function checked(dir: string) {
  const source = createLocalSource({ path: ROOT + dir, ...STATE_LIMITS });
  const rev = (await source.refs()).get(LOCAL_REFERENCE)!;
  const r = await readState(await source.files(rev), { reference: LOCAL_REFERENCE, testContexts: false, ...STATE_LIMITS, checks: { today: TODAY } });
  if (r.snapshot === undefined) throw new Error(`${dir}: ${JSON.stringify(r.problems.slice(0, 3))}`);
  return { snapshot: r.snapshot, problems: r.problems };
}

/** Check rule ids (the loader's own warnings, such as namespace.redefined, are not listed here). */
const CHECKS = new Set(['flag.rollouts.no-effect', 'rule.unreachable', 'rollout.unreachable', 'rule.distributions.incomplete', 'segment.unmatchable', 'segment.unused', 'variant.unserved', 'flag.disabled.rules', 'constraint.time.decided']);

const EXPECTED: Record<string, string[]> = {
  examples: ['info flag.disabled.rules default.features.yml:75'],
  'fixtures/state/readonly': ['warning variant.unserved default.yaml:330', 'warning variant.unserved production.yaml:331'],
  'fixtures/state/versions': [
    'warning rollout.unreachable v1_1.features.yml:12',
    'info flag.disabled.rules v1_2.features.yml:4',
    'warning rule.distributions.incomplete v1_2.features.yml:11',
    'warning rollout.unreachable v1_2.features.yml:22',
  ],
  'fixtures/state/multi-file': ['warning variant.unserved a.features.yml:12'],
  'fixtures/state/attachments': [],
  'fixtures/state/index-flipt': [],
  'test/store/fixtures/hello': [],
  'test/store/fixtures/two-files': [],
};

/** Random requests: entity ids and context values from the tree's own constraint operands, or random. */
function requests(snapshot: Snapshot, ns: string, n: number) {
  const rand = mulberry32(ns.length * 7919 + n);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const byProperty = new Map<string, string[]>();
  const entities: string[] = ['', 'x'];
  for (const s of snapshot.namespaces.get(ns)!.segments.values()) {
    for (const c of s.constraints) {
      const values = [c.value, ...(c.value.startsWith('[') ? (JSON.parse(c.value) as unknown[]).map(String) : [])];
      if (c.type === 'ENTITY_ID_COMPARISON_TYPE') entities.push(...values);
      else byProperty.set(c.property, [...(byProperty.get(c.property) ?? ['', 'x', '1', 'true']), ...values]);
    }
  }
  return Array.from({ length: n }, (_, i) => {
    const context: Record<string, string> = {};
    for (const [p, values] of byProperty) if (rand() < 0.7) context[p] = pick(values);
    return { entityId: rand() < 0.3 ? pick(entities) : `user-${i}`, context };
  });
}

for (const [dir, expected] of Object.entries(EXPECTED)) {
  t.test(`${dir}: the reports, each held against evaluation`, async (t) => {
    const { snapshot, problems } = await checked(dir);
    const reports = problems.filter((p) => CHECKS.has(p.rule));
    t.same(reports.map((p) => `${p.severity} ${p.rule} ${p.file}:${p.line}`), expected);
    if (dir === 'examples') t.same(problems.filter((p) => p.severity !== 'info'), [], 'the examples pass --strict');
    const failures: string[] = [];
    for (const p of reports) {
      const flagKey = /flag `([^`]+)`/.exec(p.message)?.[1];
      if (flagKey === undefined || p.severity === 'info') continue;
      const ns = [...snapshot.namespaces.values()].find((n) => n.flags.has(flagKey))!;
      const flag = ns.flags.get(flagKey)!;
      for (const req of requests(snapshot, ns.key, 10_000)) {
        const r = { namespaceKey: ns.key, flagKey, ...req };
        if (p.rule === 'variant.unserved') {
          const variant = /variant `([^`]+)`/.exec(p.message)![1];
          if (flag.enabled && evaluateVariant(snapshot, r).variantKey === variant) failures.push(`${p.file}:${p.line}: ${variant} served to ${JSON.stringify(req)}`);
        } else if (p.rule === 'rule.unreachable' || p.rule === 'rollout.unreachable') {
          const index = Number(/(?:rule|rollout) (\d+) of flag/.exec(p.message)![1]);
          const x = explain(snapshot, r);
          const rank = x.flagType === 'VARIANT_FLAG_TYPE' ? (x.decision.by === 'rule' ? x.decision.rank : 0) : x.decision.by === 'rollout' ? x.decision.rank : 0;
          if (rank === index) failures.push(`${p.file}:${p.line}: decided for ${JSON.stringify(req)}`);
        } else if (p.rule === 'flag.rollouts.no-effect') {
          if (evaluateBoolean(snapshot, r).enabled !== flag.enabled) failures.push(`${p.file}:${p.line}: answered otherwise for ${JSON.stringify(req)}`);
        }
        if (failures.length > 5) break;
      }
    }
    t.same(failures, []);
  });
}
