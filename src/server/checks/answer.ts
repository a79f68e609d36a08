/**
 * The body of `GET /api/v1/checks` and `GET /api/v1/namespaces/{namespace}/checks`: the semantic
 * checks of the snapshot read (store/served-checks.ts), picked by namespace, flag or segment, in the
 * API's JSON conventions (camelCase, every field always present: `flag`, `segment` and `hint` are
 * "" when a check has none). Pure: the route passes the snapshot, the checks and what was asked.
 *
 * "The checks of a flag" are those about the flag itself (its rules, rollouts, variants, metadata)
 * and those about a segment the flag's rules or rollouts use (a segment no entity can match decides
 * what the flag serves), so the flag page shows both.
 */
import { notFound } from '../../errors.js';
import type { Flag, Snapshot } from '../../model/snapshot.js';
import type { ServedChecks } from '../../store/served-checks.js';
import type { LocatedCheck } from '../../state/load.js';

export interface CheckJson {
  rule: string;
  severity: string;
  message: string;
  hint: string;
  file: string;
  line: number;
  column: number;
  namespaceKey: string;
  flagKey: string;
  segmentKey: string;
}

export interface CheckFilter {
  readonly namespace?: string;
  readonly flag?: string;
  readonly segment?: string;
}

/** The checks `filter` asks for; NotFound when it names a namespace, flag or segment the snapshot lacks. */
export function pickChecks(snapshot: Snapshot, served: ServedChecks, filter: CheckFilter): LocatedCheck[] {
  const { namespace, flag, segment } = filter;
  if (namespace === undefined) return [...served.checks];
  const ns = snapshot.namespaces.get(namespace);
  if (ns === undefined) throw notFound(`namespace "${namespace}" not found`);
  let flagSegments: Set<string> | undefined;
  if (flag !== undefined) {
    const f = ns.flags.get(flag);
    if (f === undefined) throw notFound(`flag "${namespace}/${flag}" not found`);
    flagSegments = segmentsOf(f);
  }
  if (segment !== undefined && !ns.segments.has(segment)) throw notFound(`segment "${namespace}/${segment}" not found`);
  return served.checks.filter((c) => {
    if (c.namespace !== namespace) return false;
    if (segment !== undefined && c.segment !== segment) return false;
    if (flagSegments !== undefined) return c.flag === flag || (c.segment !== undefined && flagSegments.has(c.segment));
    return true;
  });
}

/** The segment keys a flag's rules and rollouts name. */
function segmentsOf(flag: Flag): Set<string> {
  const keys = new Set<string>();
  for (const r of flag.rules) {
    if (r.segmentKey !== '') keys.add(r.segmentKey);
    for (const k of r.segmentKeys) keys.add(k);
  }
  for (const r of flag.rollouts) {
    if (r.segment === undefined) continue;
    if (r.segment.segmentKey !== '') keys.add(r.segment.segmentKey);
    for (const k of r.segment.segmentKeys) keys.add(k);
  }
  return keys;
}

export function checkJson(c: LocatedCheck): CheckJson {
  return {
    rule: c.rule,
    severity: c.severity,
    message: c.message,
    hint: c.hint ?? '',
    file: c.file,
    line: c.line,
    column: c.column,
    namespaceKey: c.namespace,
    flagKey: c.flag ?? '',
    segmentKey: c.segment ?? '',
  };
}
