/**
 * What a semantic check reports, before it has a file and position: the rule id (from the
 * catalogue, which also gives the default severity), the namespace, and the place in the state
 * model it is about (a flag field, a rule, a rollout, a segment or one of its constraints, a
 * variant). place-findings.ts turns a place into a document path; tests read reports directly.
 */
import type { Problem, Severity } from '../../model/problem.js';
import type { Flag, Snapshot } from '../../model/snapshot.js';
import { RULES, type RuleId } from '../rules.js';
import type { Policy } from '../policy/policy-file.js';
import { flagDecisions, type FlagDecisions } from './decisions.js';

export type CheckPlace =
  | { readonly kind: 'flag'; readonly flag: string; readonly field: 'rollouts' | 'enabled' | 'rules' }
  /** The flag's key, or its `metadata` map as a whole (policy-checks.ts). */
  | { readonly kind: 'flag'; readonly flag: string; readonly field: 'key' | 'metadata-map' }
  /** A key of the flag's `metadata` map (lifecycle.ts). */
  | { readonly kind: 'flag'; readonly flag: string; readonly field: 'metadata'; readonly key: string }
  | { readonly kind: 'rule'; readonly flag: string; readonly index: number; readonly field?: 'distributions' }
  | { readonly kind: 'rollout'; readonly flag: string; readonly index: number }
  | { readonly kind: 'segment'; readonly segment: string; readonly constraint?: number }
  | { readonly kind: 'variant'; readonly flag: string; readonly index: number };

export interface CheckReport {
  readonly rule: RuleId;
  readonly severity: Severity;
  readonly namespace: string;
  readonly place: CheckPlace;
  readonly message: string;
  readonly hint: string;
}

/**
 * A located check report as the server and the UI show it: the problem (rule, severity, file,
 * line, column, message, hint) and what it concerns, so a page can pick the checks of one flag.
 * `flag` for a report about a flag or its rules, rollouts, variants or metadata; `segment` for one
 * about a segment or its constraints.
 */
export interface LocatedCheck extends Problem {
  readonly namespace: string;
  readonly flag?: string;
  readonly segment?: string;
}

/** What a report concerns (LocatedCheck's namespace, flag, segment). */
export function subjectOf(report: CheckReport): { namespace: string; flag?: string; segment?: string } {
  return report.place.kind === 'segment' ? { namespace: report.namespace, segment: report.place.segment } : { namespace: report.namespace, flag: report.place.flag };
}

export interface CheckOptions {
  /** "Today" for the request-time check: injected (the CLI passes the clock), never read here. */
  readonly today: Date;
  /** Context properties that carry the request time (default `now`, `current_time`). */
  readonly timeProperties?: readonly string[];
  /** The policy file's metadata and key demands (policy/policy-checks.ts); none when absent. */
  readonly policy?: Policy;
}

export const DEFAULT_TIME_PROPERTIES: readonly string[] = ['now', 'current_time'];

/** What the check families share for one run: the snapshot, the options and the flags' decisions (computed once). */
export class CheckContext {
  private readonly decided = new Map<Flag, FlagDecisions>();
  constructor(
    readonly snapshot: Snapshot,
    readonly options: CheckOptions,
  ) {}

  decisions(flag: Flag): FlagDecisions {
    let d = this.decided.get(flag);
    if (d === undefined) {
      d = flagDecisions(flag, this.snapshot.namespaces.get(flag.namespaceKey)!.segments);
      this.decided.set(flag, d);
    }
    return d;
  }
}

/** A report of `rule`, with the catalogue's severity. */
export function finding(rule: RuleId, namespace: string, place: CheckPlace, message: string, hint: string): CheckReport {
  return { rule, severity: RULES[rule].severity, namespace, place, message, hint };
}

/** `n`% with at most one decimal, as shares of 1000 buckets are. */
export function percent(buckets: number, of: number): string {
  return `${Math.round((buckets / of) * 1000) / 10}%`;
}
