/**
 * The differential run: random valid states, each loaded by vexil (from Flipt-format YAML) and by
 * Flipt's WASM engine (from the snapshot JSON written independently from the same abstract state),
 * then many random (flag, entity, context) evaluations compared field by field: variantKey,
 * variantAttachment, match, reason, enabled, errors, and segmentKeys as a SET (vexil's order is
 * deterministic, Flipt's follows a hash map).
 *
 * Case i belongs to state floor(i / evalsPerState) and is that state's (i % evalsPerState)-th
 * evaluation; both are generated from their own PRNG seeded by (seed, state, eval), so any case is
 * reproduced from (seed, i, evalsPerState) alone (scripts/oracle.ts --case).
 *
 * Odd-numbered states are evaluated by generated matchers (prepared after the load, as the server's
 * store does after a swap), even-numbered ones by the interpreter: both are compared with Flipt.
 */
import { prepareMatcher } from '../../src/evaluation/codegen.js';
import { compileConstraint } from '../../src/evaluation/compile-segments.js';
import { matchConstraint } from '../../src/evaluation/constraints.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import type { Problem } from '../../src/model/problem.js';
import { toFliptSnapshots } from '../support/flipt-snapshot.js';
import {
  evalRng,
  generateState,
  randomRequest,
  stateRng,
  toFeaturesYaml,
  type GenFlag,
  type GenNamespace,
  type GenRequest,
  type GenState,
  type StateText,
} from '../support/random-state.js';
import { FliptEngineOracle, type Outcome } from './flipt-engine.js';
import { requestQuirks, type Quirk } from './quirks.js';

export const NAMESPACES = ['default', 'team-a'] as const;
export const DEFAULT_EVALS_PER_STATE = 100;

export interface Difference {
  readonly seed: number;
  readonly caseIndex: number;
  readonly stateIndex: number;
  readonly evalIndex: number;
  readonly evalsPerState: number;
  readonly request: GenRequest;
  readonly files: readonly StateText[];
  readonly vexil: Outcome;
  readonly flipt: Outcome;
  /** Fields that differ. */
  readonly fields: readonly string[];
}

/** vexil refused a state the generator considers valid: a generator bug or a vexil validation bug. */
export interface Rejection {
  readonly seed: number;
  readonly stateIndex: number;
  readonly files: readonly StateText[];
  readonly problems: readonly Problem[];
}

export interface Tally {
  cases: number;
  /** Compared strictly (touched no quirk of the oracle). */
  strict: number;
  /** Touched a quirk class; compared, and differences there are excused. */
  quirky: number;
  /** Differences excused, per quirk touched. */
  excused: Record<string, number>;
  /** Outcome shapes seen, e.g. `variant MATCH match` / `boolean DEFAULT false` / `error`: the coverage. */
  shapes: Record<string, number>;
  /**
   * Per `TYPE operator`, how often a constraint of the evaluated flag was true / false for the
   * request: the operator coverage. Measured with vexil's constraint matcher (a meter only: the
   * verdicts themselves are what the comparison checks).
   */
  verdicts: Record<string, { true: number; false: number }>;
  states: number;
  warnings: number;
}

export interface RunOptions {
  readonly seed: number;
  /** Number of cases; the last state may be cut short. */
  readonly cases: number;
  /** Start at this case index (default 0). */
  readonly from?: number;
  readonly evalsPerState?: number;
  /** Stop after this many differences (default: never). */
  readonly maxDifferences?: number;
  readonly onDifference?: (d: Difference) => void;
  readonly onProgress?: (t: Tally) => void;
}

export interface RunResult {
  readonly tally: Tally;
  readonly differences: Difference[];
  readonly rejections: Rejection[];
}

export function newTally(): Tally {
  return { cases: 0, strict: 0, quirky: 0, excused: {}, shapes: {}, verdicts: {}, states: 0, warnings: 0 };
}

export function stateFor(seed: number, stateIndex: number): GenState {
  return generateState(stateRng(seed, stateIndex));
}

export function loadIntoVexil(files: readonly StateText[]): { snapshot?: Snapshot; problems: readonly Problem[] } {
  const enc = new TextEncoder();
  return load(
    files.map((f) => ({ path: f.path, bytes: enc.encode(f.text) })),
    { reference: 'main', revision: 'oracle', now: new Date('2026-01-01T00:00:00Z') },
  );
}

/** Odd states: every flag's generated matcher made, as the server's store does after a swap; even states: interpreted. */
function prepareForState(snapshot: Snapshot, stateIndex: number): void {
  if (stateIndex % 2 === 0) return;
  for (const ns of snapshot.namespaces.values()) for (const flag of ns.flags.values()) prepareMatcher(flag.compiled);
}

export function evaluateWithVexil(snapshot: Snapshot, req: GenRequest): Outcome {
  const r = { namespaceKey: req.namespaceKey, flagKey: req.flagKey, entityId: req.entityId, context: req.context };
  try {
    if (req.kind === 'variant') {
      const v = evaluateVariant(snapshot, r);
      return { kind: 'variant', match: v.match, reason: v.reason, variantKey: v.variantKey, variantAttachment: v.variantAttachment, segmentKeys: [...v.segmentKeys] };
    }
    const b = evaluateBoolean(snapshot, r);
    return { kind: 'boolean', enabled: b.enabled, reason: b.reason, segmentKeys: [...b.segmentKeys] };
  } catch (err) {
    return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
}

export function evaluateWithFlipt(oracle: FliptEngineOracle, req: GenRequest): Outcome {
  const ctx = { ...req.context };
  return req.kind === 'variant'
    ? oracle.variant(req.namespaceKey, req.flagKey, req.entityId, ctx)
    : oracle.boolean(req.namespaceKey, req.flagKey, req.entityId, ctx);
}

const sortedSet = (keys: readonly string[]) => [...new Set(keys)].sort();

/** The fields that differ. Error messages are not compared (the engine's are its own), only that both failed. */
export function compareOutcomes(a: Outcome, b: Outcome): string[] {
  if (a.kind !== b.kind) return ['kind'];
  if (a.kind === 'error' || b.kind === 'error') return [];
  const out: string[] = [];
  if (a.reason !== b.reason) out.push('reason');
  const ka = sortedSet(a.segmentKeys);
  const kb = sortedSet(b.segmentKeys);
  if (ka.length !== a.segmentKeys.length) out.push('segmentKeys(duplicates in vexil)');
  if (ka.join('\u0000') !== kb.join('\u0000')) out.push('segmentKeys');
  if (a.kind === 'variant' && b.kind === 'variant') {
    if (a.match !== b.match) out.push('match');
    if (a.variantKey !== b.variantKey) out.push('variantKey');
    if (a.variantAttachment !== b.variantAttachment) out.push('variantAttachment');
  } else if (a.kind === 'boolean' && b.kind === 'boolean') {
    if (a.enabled !== b.enabled) out.push('enabled');
  }
  return out;
}

function shapeOf(o: Outcome): string {
  if (o.kind === 'error') return 'error';
  const reason = o.reason.replace('_EVALUATION_REASON', '');
  const keys = o.segmentKeys.length === 0 ? 'no-segments' : o.segmentKeys.length === 1 ? '1-segment' : 'n-segments';
  if (o.kind === 'variant') return `variant ${reason} ${o.match ? 'match' : 'no-match'} ${o.variantKey === '' ? 'no-variant' : 'variant'} ${keys}`;
  return `boolean ${reason} ${o.enabled} ${keys}`;
}

function countVerdicts(tally: Tally, ns: GenNamespace, flag: GenFlag | undefined, req: GenRequest): void {
  if (!flag) return;
  const keys = new Set(flag.type === 'VARIANT_FLAG_TYPE' ? flag.rules.flatMap((r) => r.segment.keys) : flag.rollouts.flatMap((r) => (r.kind === 'segment' ? r.segment.keys : [])));
  for (const s of ns.segments) {
    if (!keys.has(s.key)) continue;
    for (const c of s.constraints) {
      const compiled = compileConstraint(c.type, c.operator, c.property, c.value ?? '');
      if (!compiled) continue;
      const k = `${c.type.replace('_COMPARISON_TYPE', '')} ${c.operator}`;
      const v = (tally.verdicts[k] ??= { true: 0, false: 0 });
      if (matchConstraint(compiled, req.entityId, req.context)) v.true++;
      else v.false++;
    }
  }
}

/** Runs cases [from, from + cases) and returns what differed. Needs an oracle with engines for NAMESPACES. */
export function runCases(oracle: FliptEngineOracle, opts: RunOptions): RunResult {
  const per = opts.evalsPerState ?? DEFAULT_EVALS_PER_STATE;
  const from = opts.from ?? 0;
  const end = from + opts.cases;
  const tally = newTally();
  const differences: Difference[] = [];
  const rejections: Rejection[] = [];

  let i = from;
  while (i < end) {
    const stateIndex = Math.floor(i / per);
    const state = stateFor(opts.seed, stateIndex);
    const files = toFeaturesYaml(state);
    const loaded = loadIntoVexil(files);
    tally.states++;
    tally.warnings += loaded.problems.filter((p) => p.severity === 'warning').length;
    const last = Math.min(end, (stateIndex + 1) * per);
    if (!loaded.snapshot) {
      rejections.push({ seed: opts.seed, stateIndex, files, problems: loaded.problems });
      i = last;
      continue;
    }
    oracle.load(toFliptSnapshots(state));
    prepareForState(loaded.snapshot, stateIndex);

    for (; i < last; i++) {
      const evalIndex = i - stateIndex * per;
      const req = randomRequest(evalRng(opts.seed, stateIndex, evalIndex), state);
      const vexil = evaluateWithVexil(loaded.snapshot, req);
      const flipt = evaluateWithFlipt(oracle, req);
      const ns = state.namespaces.find((n) => n.key === req.namespaceKey)!;
      const flag = ns.flags.find((f) => f.key === req.flagKey);
      const quirks: Quirk[] = requestQuirks(ns, flag, req);
      countVerdicts(tally, ns, flag, req);
      tally.cases++;
      if (quirks.length > 0) tally.quirky++;
      else tally.strict++;
      const shape = shapeOf(vexil);
      tally.shapes[shape] = (tally.shapes[shape] ?? 0) + 1;

      const fields = compareOutcomes(vexil, flipt);
      if (fields.length === 0) continue;
      if (quirks.length > 0) {
        for (const q of quirks) tally.excused[q] = (tally.excused[q] ?? 0) + 1;
        continue;
      }
      const d: Difference = { seed: opts.seed, caseIndex: i, stateIndex, evalIndex, evalsPerState: per, request: req, files, vexil, flipt, fields };
      differences.push(d);
      opts.onDifference?.(d);
      if (opts.maxDifferences !== undefined && differences.length >= opts.maxDifferences) return { tally, differences, rejections };
    }
    opts.onProgress?.(tally);
  }
  return { tally, differences, rejections };
}

/** One case, rebuilt from its coordinates: for reproducers. */
export function reproduceCase(oracle: FliptEngineOracle, seed: number, caseIndex: number, evalsPerState = DEFAULT_EVALS_PER_STATE) {
  const stateIndex = Math.floor(caseIndex / evalsPerState);
  const evalIndex = caseIndex - stateIndex * evalsPerState;
  const state = stateFor(seed, stateIndex);
  const files = toFeaturesYaml(state);
  const loaded = loadIntoVexil(files);
  const req = randomRequest(evalRng(seed, stateIndex, evalIndex), state);
  if (!loaded.snapshot) return { stateIndex, evalIndex, files, request: req, problems: loaded.problems };
  oracle.load(toFliptSnapshots(state));
  prepareForState(loaded.snapshot, stateIndex);
  const ns = state.namespaces.find((n) => n.key === req.namespaceKey)!;
  const quirks = requestQuirks(ns, ns.flags.find((f) => f.key === req.flagKey), req);
  const vexil = evaluateWithVexil(loaded.snapshot, req);
  const flipt = evaluateWithFlipt(oracle, req);
  return { stateIndex, evalIndex, files, request: req, problems: loaded.problems, vexil, flipt, quirks, fields: compareOutcomes(vexil, flipt) };
}

/** A difference as text a human can act on: coordinates, the YAML, the request, both results. */
export function formatDifference(d: Pick<Difference, 'seed' | 'caseIndex' | 'evalsPerState' | 'files' | 'request' | 'vexil' | 'flipt' | 'fields'>): string {
  const lines = [
    `--- difference in ${d.fields.join(', ')} — seed ${d.seed}, case ${d.caseIndex} (evals per state ${d.evalsPerState})`,
    `reproduce: node --import tsx scripts/oracle.ts --seed ${d.seed} --case ${d.caseIndex}${d.evalsPerState === DEFAULT_EVALS_PER_STATE ? '' : ` --evals-per-state ${d.evalsPerState}`}`,
    `request (${d.request.kind}): ${JSON.stringify({ namespaceKey: d.request.namespaceKey, flagKey: d.request.flagKey, entityId: d.request.entityId, context: d.request.context })}`,
    `vexil: ${JSON.stringify(d.vexil)}`,
    `flipt: ${JSON.stringify(d.flipt)}`,
  ];
  for (const f of d.files) lines.push(`# ${f.path}`, f.text.trimEnd());
  return lines.join('\n');
}
