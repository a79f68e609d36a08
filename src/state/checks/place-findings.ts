/**
 * Check reports (places in the state model) to findings (a document and a path in it), through
 * the declarations the semantic pass recorded (semantic.ts NamespaceIndex: the document and index
 * of each flag and segment). A valid state declares each key once, and rules, rollouts,
 * variants and constraints keep their declared positions in the snapshot, so the path is exact.
 * Each finding keeps the report it came from, so load.ts can say what a located one concerns.
 */
import type { Finding, PathSegment } from '../finding.js';
import type { NamespaceIndex } from '../semantic.js';
import type { CheckPlace, CheckReport } from './check-report.js';

/** A finding of a check report, with the report. */
export interface PlacedFinding extends Finding {
  readonly report: CheckReport;
}

export function placeFindings(reports: readonly CheckReport[], namespaces: ReadonlyMap<string, NamespaceIndex>): Map<string, PlacedFinding[]> {
  const out = new Map<string, PlacedFinding[]>();
  for (const r of reports) {
    const ns = namespaces.get(r.namespace);
    if (ns === undefined) continue;
    const placed = pathOf(r.place, ns);
    if (placed === undefined) continue;
    const f: PlacedFinding = { severity: r.severity, rule: r.rule, message: r.message, hint: r.hint, doc: placed.doc, path: placed.path, ...(placed.at ? { at: placed.at } : {}), report: r };
    const list = out.get(placed.file);
    if (list) list.push(f);
    else out.set(placed.file, [f]);
  }
  return out;
}

function pathOf(place: CheckPlace, ns: NamespaceIndex): { file: string; doc: number; path: PathSegment[]; at?: 'key' } | undefined {
  if (place.kind === 'segment') {
    const d = ns.segments.get(place.segment);
    if (d === undefined) return undefined;
    const base = { file: d.doc.file, doc: d.doc.index };
    return place.constraint === undefined
      ? { ...base, path: ['segments', d.index, 'key'] }
      : { ...base, path: ['segments', d.index, 'constraints', place.constraint] };
  }
  const d = ns.flags.get(place.flag);
  if (d === undefined) return undefined;
  const base = { file: d.doc.file, doc: d.doc.index };
  switch (place.kind) {
    case 'flag':
      if (place.field === 'key') return { ...base, path: ['flags', d.index, 'key'] };
      if (place.field === 'metadata-map') return { ...base, path: ['flags', d.index, 'metadata'], at: 'key' };
      if (place.field === 'metadata') return { ...base, path: ['flags', d.index, 'metadata', place.key], at: 'key' };
      if (place.field === 'enabled' && !Object.hasOwn(d.data, 'enabled')) return { ...base, path: ['flags', d.index, 'key'] };
      return { ...base, path: ['flags', d.index, place.field], at: 'key' };
    case 'rule':
      return place.field === 'distributions'
        ? { ...base, path: ['flags', d.index, 'rules', place.index, 'distributions'], at: 'key' }
        : { ...base, path: ['flags', d.index, 'rules', place.index] };
    case 'rollout':
      return { ...base, path: ['flags', d.index, 'rollouts', place.index] };
    case 'variant':
      return { ...base, path: ['flags', d.index, 'variants', place.index, 'key'] };
  }
}
