/** The diff and, when a sample is given, its impact: the one assembly the API and the CLI share. Pure. */
import { diff } from './diff.js';
import { impact, type ImpactOptions } from './impact.js';
import type { DiffOptions, DiffReport } from './types.js';
import type { Snapshot } from '../model/snapshot.js';

export function diffReport(base: Snapshot, head: Snapshot, opts: DiffOptions & { readonly impact?: ImpactOptions }): DiffReport {
  const d = diff(base, head, opts.namespace !== undefined ? { namespace: opts.namespace } : {});
  if (opts.impact === undefined) return d;
  return { ...d, impact: impact(base, head, d, opts.impact) };
}
