/**
 * Writes scenario (d) of the evaluation benchmark, one flag with 5 rules of 3 segments of 4
 * constraints, in the three engines' formats from one description, so the definitions cannot drift:
 *   bench/fixtures/complex.features.yml        Flipt declarative YAML (vexil)
 *   bench/fixtures/complex.flipt-snapshot.json Flipt's client snapshot JSON (flipt-client-js)
 *   bench/fixtures/complex.flagd-flags.json    flagd flag definition with json-logic (flagd-core)
 * and the evaluation context that makes rules 1-4 miss (every constraint of them is evaluated: OR of
 * ANY segments whose 4 constraints all miss) and rule 5 match (AND of ALL segments whose 4
 * constraints all match), so each evaluation runs all 60 constraints, then a 50/50 split.
 *
 * Run: node --import tsx bench/make-complex-fixtures.ts (the files are checked in; rerun after editing).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const COMPLEX_FLAG_KEY = 'flag_complex';
const RULES = 5;
const SEGMENTS = 3;

/** The same string context goes to all three engines (Flipt contexts are string maps). */
export const COMPLEX_CONTEXT: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    Array.from({ length: SEGMENTS }, (_, i) => i + 1).flatMap((s) => [
      [`plan${s}`, 'tier-5'],
      [`age${s}`, '30'],
      [`country${s}`, 'de'],
      [`beta${s}`, 'true'],
    ]),
  ),
);

type Kind = 'string' | 'number' | 'boolean';
interface ConstraintSpec {
  kind: Kind;
  property: string;
  /** Flipt operator. */
  operator: 'eq' | 'lte' | 'gte' | 'isoneof' | 'true' | 'false';
  value: string;
}
interface SegmentSpec {
  key: string;
  all: boolean;
  constraints: ConstraintSpec[];
}
interface RuleSpec {
  and: boolean;
  segments: SegmentSpec[];
  distributions: Array<{ variant: string; rollout: number }>;
}

function segmentFor(rule: number, slot: number): SegmentSpec {
  const last = rule === RULES;
  return {
    key: `seg_r${rule}_s${slot}`,
    all: last,
    constraints: last
      ? [
          { kind: 'string', property: `plan${slot}`, operator: 'eq', value: 'tier-5' },
          { kind: 'number', property: `age${slot}`, operator: 'gte', value: '21' },
          { kind: 'string', property: `country${slot}`, operator: 'isoneof', value: '["fr","de","it"]' },
          { kind: 'boolean', property: `beta${slot}`, operator: 'true', value: '' },
        ]
      : [
          { kind: 'string', property: `plan${slot}`, operator: 'eq', value: `tier-${rule}` },
          { kind: 'number', property: `age${slot}`, operator: 'lte', value: String(10 + rule) },
          { kind: 'string', property: `country${slot}`, operator: 'isoneof', value: `["us","ca","r${rule}"]` },
          { kind: 'boolean', property: `beta${slot}`, operator: 'false', value: '' },
        ],
  };
}

export function complexRules(): RuleSpec[] {
  return Array.from({ length: RULES }, (_, i) => {
    const r = i + 1;
    const last = r === RULES;
    return {
      and: last,
      segments: Array.from({ length: SEGMENTS }, (_, j) => segmentFor(r, j + 1)),
      distributions: last
        ? [
            { variant: 'control', rollout: 50 },
            { variant: 'treatment', rollout: 50 },
          ]
        : [{ variant: `r${r}`, rollout: 100 }],
    };
  });
}

const VARIANTS = ['control', 'treatment', 'r1', 'r2', 'r3', 'r4'];
const FLIPT_TYPE: Record<Kind, [string, string]> = {
  string: ['STRING_COMPARISON_TYPE', 'STRING_CONSTRAINT_COMPARISON_TYPE'],
  number: ['NUMBER_COMPARISON_TYPE', 'NUMBER_CONSTRAINT_COMPARISON_TYPE'],
  boolean: ['BOOLEAN_COMPARISON_TYPE', 'BOOLEAN_CONSTRAINT_COMPARISON_TYPE'],
};

export function complexYaml(rules: RuleSpec[]): string {
  const q = JSON.stringify;
  const out = ['version: "1.4"', 'namespace: default', 'flags:', `  - key: ${COMPLEX_FLAG_KEY}`, `    name: ${COMPLEX_FLAG_KEY}`];
  out.push('    type: VARIANT_FLAG_TYPE', '    enabled: true', `    variants: [${VARIANTS.map((v) => `{ key: ${v} }`).join(', ')}]`, '    rules:');
  for (const r of rules) {
    out.push(`      - segment: { keys: [${r.segments.map((s) => s.key).join(', ')}], operator: ${r.and ? 'AND' : 'OR'}_SEGMENT_OPERATOR }`);
    out.push(`        distributions: [${r.distributions.map((d) => `{ variant: ${d.variant}, rollout: ${d.rollout} }`).join(', ')}]`);
  }
  out.push('segments:');
  for (const s of rules.flatMap((r) => r.segments)) {
    out.push(`  - key: ${s.key}`, `    name: ${s.key}`, `    match_type: ${s.all ? 'ALL' : 'ANY'}_MATCH_TYPE`, '    constraints:');
    for (const c of s.constraints) {
      const value = c.kind === 'boolean' ? '' : `, value: ${q(c.value)}`;
      out.push(`      - { type: ${FLIPT_TYPE[c.kind][0]}, property: ${c.property}, operator: ${q(c.operator)}${value} }`);
    }
  }
  return `${out.join('\n')}\n`;
}

export function complexFliptSnapshot(rules: RuleSpec[]): unknown {
  const ts = '2024-01-01T00:00:00Z';
  let cid = 0;
  return {
    namespace: { key: 'default' },
    flags: [
      {
        key: COMPLEX_FLAG_KEY,
        name: COMPLEX_FLAG_KEY,
        description: '',
        enabled: true,
        type: 'VARIANT_FLAG_TYPE',
        createdAt: ts,
        updatedAt: ts,
        rules: rules.map((r, i) => ({
          id: `rule-${i + 1}`,
          rank: i + 1,
          segmentOperator: r.and ? 'AND_SEGMENT_OPERATOR' : 'OR_SEGMENT_OPERATOR',
          segments: r.segments.map((s) => ({
            key: s.key,
            name: s.key,
            description: '',
            matchType: s.all ? 'ALL_SEGMENT_MATCH_TYPE' : 'ANY_SEGMENT_MATCH_TYPE',
            createdAt: null,
            updatedAt: null,
            constraints: s.constraints.map((c) => ({
              id: `c${++cid}`,
              type: FLIPT_TYPE[c.kind][1],
              property: c.property,
              operator: c.operator,
              value: c.value,
            })),
          })),
          distributions: r.distributions.map((d, j) => ({
            id: `d${i + 1}-${j + 1}`,
            ruleId: `rule-${i + 1}`,
            variantId: `v-${d.variant}`,
            variantKey: d.variant,
            variantAttachment: '',
            rollout: d.rollout,
          })),
        })),
        rollouts: [],
      },
    ],
  };
}

/** json-logic with flagd's own operators; the string context is coerced as JS does ("30" >= 21). */
function jsonLogicConstraint(c: ConstraintSpec): unknown {
  const v = { var: c.property };
  switch (c.operator) {
    case 'eq':
      return { '==': [v, c.value] };
    case 'lte':
      return { '<=': [v, Number(c.value)] };
    case 'gte':
      return { '>=': [v, Number(c.value)] };
    case 'isoneof':
      return { in: [v, JSON.parse(c.value) as string[]] };
    case 'true':
      return { '==': [v, 'true'] };
    case 'false':
      return { '==': [v, 'false'] };
  }
}

export function complexFlagd(rules: RuleSpec[]): unknown {
  const branches: unknown[] = [];
  for (const r of rules) {
    const segs = r.segments.map((s) => ({ [s.all ? 'and' : 'or']: s.constraints.map(jsonLogicConstraint) }));
    branches.push({ [r.and ? 'and' : 'or']: segs });
    branches.push(
      r.distributions.length === 1 && r.distributions[0].rollout === 100
        ? r.distributions[0].variant
        : { fractional: r.distributions.map((d) => [d.variant, d.rollout]) },
    );
  }
  branches.push(null);
  return {
    $schema: 'https://flagd.dev/schema/v0/flags.json',
    flags: {
      [COMPLEX_FLAG_KEY]: {
        state: 'ENABLED',
        variants: Object.fromEntries(VARIANTS.map((v) => [v, v])),
        defaultVariant: 'control',
        targeting: { if: branches },
      },
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rules = complexRules();
  const dir = new URL('./fixtures/', import.meta.url);
  writeFileSync(new URL('complex.features.yml', dir), complexYaml(rules));
  writeFileSync(new URL('complex.flipt-snapshot.json', dir), `${JSON.stringify(complexFliptSnapshot(rules), null, 1)}\n`);
  writeFileSync(new URL('complex.flagd-flags.json', dir), `${JSON.stringify(complexFlagd(rules), null, 1)}\n`);
  writeFileSync(new URL('complex.context.json', dir), `${JSON.stringify(COMPLEX_CONTEXT, null, 1)}\n`);
  console.log('wrote bench/fixtures/complex.*');
}
