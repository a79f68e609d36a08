/**
 * The diff and, when a sample is given, its impact: the one assembly the API and the CLI share. Pure.
 * `diffReportSteps` is the same in steps (steps.ts): the server runs it in time slices, over the
 * synthetic sample given by its size and contexts (impact.ts syntheticImpactSteps); `diffReport`
 * runs it at once.
 */
import { diffSteps } from './diff.js';
import { impactSteps, syntheticImpactSteps, type ImpactOptions } from './impact.js';
import { drain, type Steps } from './steps.js';
import type { DiffOptions, DiffReport } from './types.js';
import type { Snapshot } from '../model/snapshot.js';

/** The synthetic sample (impact.ts syntheticSample) to build: `entities` ids over `contexts`. */
export interface SyntheticImpact {
  readonly entities: number;
  readonly contexts: readonly Readonly<Record<string, string>>[];
}

export interface ReportOptions extends DiffOptions {
  readonly impact?: ImpactOptions | SyntheticImpact;
}

export function diffReport(base: Snapshot, head: Snapshot, opts: ReportOptions): DiffReport {
  return drain(diffReportSteps(base, head, opts));
}

export function* diffReportSteps(base: Snapshot, head: Snapshot, opts: ReportOptions): Steps<DiffReport> {
  const d = yield* diffSteps(base, head, opts.namespace !== undefined ? { namespace: opts.namespace } : {});
  if (opts.impact === undefined) return d;
  const i = opts.impact;
  return { ...d, impact: 'sample' in i ? yield* impactSteps(base, head, d, i) : yield* syntheticImpactSteps(base, head, d, i.entities, i.contexts) };
}
