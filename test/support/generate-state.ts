/**
 * A generated, valid state repository of any size, for load tests and benchmarks. Deterministic
 * for a given seed. Shapes mix what real states use: variant flags with attachments, default
 * variants, single-segment and AND multi-segment rules; boolean flags with segment and threshold
 * rollouts; segments with every constraint type. Segments live in their own file, sorted AFTER
 * the flag files, so loading it exercises cross-file references in "wrong" order.
 *
 * About 600 bytes of YAML per flag: 10,000 flags make a ~6 MB state.
 */
import { mulberry32 } from './prng.js';

export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

export interface GenerateOptions {
  /** Total number of flags. */
  readonly flags: number;
  /** Namespaces to spread them over (default 2: `default` and `team-2`...). */
  readonly namespaces?: number;
  /** Flag files per namespace (default 5). */
  readonly filesPerNamespace?: number;
  /** Segments per namespace (default max(10, flags / 20)). */
  readonly segmentsPerNamespace?: number;
  readonly seed?: number;
  /** Write JSON files instead of YAML. */
  readonly json?: boolean;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

export function generateState(opts: GenerateOptions): GeneratedFile[] {
  const rand = mulberry32(opts.seed ?? 42);
  const nsCount = Math.max(1, opts.namespaces ?? 2);
  const filesPerNs = Math.max(1, opts.filesPerNamespace ?? 5);
  const segCount = Math.max(3, opts.segmentsPerNamespace ?? Math.max(10, Math.floor(opts.flags / 20)));
  const files: GeneratedFile[] = [];
  const ext = opts.json ? 'json' : 'yml';
  let flagNo = 0;
  for (let n = 0; n < nsCount; n++) {
    const ns = n === 0 ? 'default' : `team-${n + 1}`;
    const segKey = (i: number) => `segment_${pad(i % segCount, 5)}`;
    const flagsHere = Math.floor(opts.flags / nsCount) + (n < opts.flags % nsCount ? 1 : 0);
    for (let f = 0; f < filesPerNs; f++) {
      const count = Math.floor(flagsHere / filesPerNs) + (f < flagsHere % filesPerNs ? 1 : 0);
      const flags: unknown[] = [];
      for (let k = 0; k < count; k++, flagNo++) flags.push(makeFlag(flagNo, rand, segKey));
      const doc: Record<string, unknown> = { version: '1.4', namespace: n === 0 ? 'default' : { key: ns, name: `Team ${n + 1}`, description: 'generated' }, flags };
      files.push({ path: `${ns}/flags-${pad(f, 3)}.features.${ext}`, text: serialize(doc, !!opts.json) });
    }
    const segments: unknown[] = [];
    for (let s = 0; s < segCount; s++) segments.push(makeSegment(s, rand));
    files.push({ path: `${ns}/zz-segments.features.${ext}`, text: serialize({ version: '1.4', namespace: ns, segments }, !!opts.json) });
  }
  return files;
}

function makeFlag(i: number, rand: () => number, segKey: (i: number) => string): Record<string, unknown> {
  const key = `flag_${pad(i, 6)}`;
  const s = Math.floor(rand() * 1e6);
  if (i % 10 < 7) {
    const split = 10 + Math.floor(rand() * 80);
    return {
      key,
      name: `Flag ${i}`,
      description: `Generated variant flag ${i} for load tests`,
      enabled: rand() < 0.9,
      variants: [
        { key: 'control', name: 'Control' },
        { key: 'treatment', name: 'Treatment', attachment: { color: 'blue', weight: i % 7, tags: ['a', 'b'] } },
        { key: 'holdout', name: 'Holdout', default: true },
      ],
      rules: [
        { segment: segKey(s), distributions: [{ variant: 'control', rollout: split }, { variant: 'treatment', rollout: 100 - split }] },
        { segment: { keys: [segKey(s + 1), segKey(s + 2)], operator: 'AND_SEGMENT_OPERATOR' }, distributions: [{ variant: 'holdout', rollout: 100 }] },
      ],
    };
  }
  return {
    key,
    name: `Flag ${i}`,
    description: `Generated boolean flag ${i} for load tests`,
    type: 'BOOLEAN_FLAG_TYPE',
    enabled: rand() < 0.5,
    metadata: { team: `team-${i % 13}`, tier: i % 3 },
    rollouts: [
      { description: 'beta users', segment: { key: segKey(s), value: true } },
      { segment: { keys: [segKey(s + 1), segKey(s + 3)], value: false } },
      { threshold: { percentage: Math.round(rand() * 10000) / 100, value: true } },
    ],
  };
}

function makeSegment(i: number, rand: () => number): Record<string, unknown> {
  const kinds = [
    { type: 'STRING_COMPARISON_TYPE', property: 'plan', operator: 'eq', value: 'pro' },
    { type: 'NUMBER_COMPARISON_TYPE', property: 'age', operator: 'gte', value: String(18 + (i % 30)) },
    { type: 'DATETIME_COMPARISON_TYPE', property: 'signup', operator: 'lt', value: '2025-01-01T00:00:00Z' },
    { type: 'BOOLEAN_COMPARISON_TYPE', property: 'beta', operator: 'true' },
    { type: 'STRING_COMPARISON_TYPE', property: 'country', operator: 'isoneof', value: '["fr","de","it"]' },
    { type: 'NUMBER_COMPARISON_TYPE', property: 'build', operator: 'isnotoneof', value: '[1, 2.5, 3]' },
    { type: 'ENTITY_ID_COMPARISON_TYPE', property: 'entity', operator: 'prefix', value: 'user-' },
  ];
  const a = kinds[i % kinds.length];
  const b = kinds[Math.floor(rand() * kinds.length)];
  return {
    key: `segment_${pad(i, 5)}`,
    name: `Segment ${i}`,
    description: 'generated',
    match_type: i % 2 === 0 ? 'ALL_MATCH_TYPE' : 'ANY_MATCH_TYPE',
    constraints: [a, b],
  };
}

// A small block-style YAML emitter (the generator must not depend on the loader under test).
function serialize(doc: unknown, json: boolean): string {
  if (json) return `${JSON.stringify(doc, null, 2)}\n`;
  const out: string[] = [];
  emit(doc, 0, out, false);
  return `${out.join('\n')}\n`;
}

function scalar(v: unknown): string {
  if (typeof v === 'string') return /^[A-Za-z_][-A-Za-z0-9_ .]*$/.test(v) && !/^(true|false|null|yes|no|on|off|~)$/i.test(v) ? v : JSON.stringify(v);
  return String(v);
}

function emit(v: unknown, indent: number, out: string[], inList: boolean): void {
  const sp = ' '.repeat(indent);
  if (Array.isArray(v)) {
    for (const item of v) {
      if (item !== null && typeof item === 'object') {
        const lines: string[] = [];
        emit(item, indent + 2, lines, true);
        lines[0] = `${sp}- ${lines[0].slice(indent + 2)}`;
        out.push(...lines);
      } else {
        out.push(`${sp}- ${scalar(item)}`);
      }
    }
    return;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, val] of Object.entries(v)) {
      if (val !== null && typeof val === 'object') {
        if (Array.isArray(val) && val.length === 0) out.push(`${sp}${k}: []`);
        else {
          out.push(`${sp}${k}:`);
          emit(val, Array.isArray(val) ? indent : indent + 2, out, false);
        }
      } else {
        out.push(`${sp}${k}: ${scalar(val)}`);
      }
    }
    return;
  }
  out.push(`${sp}${scalar(v)}`);
  void inList;
}
