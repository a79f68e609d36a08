/**
 * `constraint.time.decided`: a date-time constraint on a property that carries the request time
 * (`now`, `current_time` by default) whose outcome today already decides for every later request:
 * `gt`/`gte`/`neq` an instant in the past is always true from now on, `lt`/`lte`/`eq` one in the
 * past never true again. "Today" is injected (CheckOptions.today), never read from the clock here.
 * Constraints with an instant still ahead are not decided and not reported.
 */
import { parseGoTime } from '../../evaluation/values.js';
import { DEFAULT_TIME_PROPERTIES, finding, type CheckContext, type CheckReport } from './check-report.js';

export function requestTimeChecks(ctx: CheckContext): CheckReport[] {
  const out: CheckReport[] = [];
  const properties = ctx.options.timeProperties ?? DEFAULT_TIME_PROPERTIES;
  const todayMs = ctx.options.today.getTime();
  for (const ns of ctx.snapshot.namespaces.values()) {
    for (const segment of ns.segments.values()) {
      for (let i = 0; i < segment.constraints.length; i++) {
        const c = segment.constraints[i];
        if (c.type !== 'DATETIME_COMPARISON_TYPE' || !properties.includes(c.property)) continue;
        const t = parseGoTime(c.value);
        if (t === undefined) continue;
        const ms = t.seconds * 1000 + Math.floor(t.nanos / 1e6);
        let always: boolean;
        if (ms > todayMs) continue; // still ahead (an instant equal to today is in the past by the time of any request)
        if (c.operator === 'gt' || c.operator === 'gte' || c.operator === 'neq') always = true;
        else if (c.operator === 'lt' || c.operator === 'lte' || c.operator === 'eq') always = false;
        else continue;
        out.push(finding('constraint.time.decided', ns.key, { kind: 'segment', segment: segment.key, constraint: i },
          `constraint ${i + 1} of segment \`${segment.key}\` (\`${c.property}\` ${c.operator} ${c.value}) is ${always ? `true for every request since ${c.value}` : `never true again after ${c.value}`}, if \`${c.property}\` carries the request time`,
          always ? 'remove the constraint: the date has passed' : 'remove the constraint, or the segment, rule or rollout it gates: the date has passed'));
      }
    }
  }
  return out;
}
