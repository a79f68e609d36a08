/**
 * The report of `vexil stale` (its JSON form is documented by schemas/stale.schema.json): one
 * finding per flag and reason (`uniform`: one outcome for everyone, with the commit since which;
 * `expired`: a temporary flag past `expires`; `unreferenced`: the key is in no source file under
 * --code), the lifecycle problems located like `vexil validate`'s, and what the history walk and
 * the code scan covered. Built from parts the command gathered; no I/O here.
 */
import type { Problem } from '../../model/problem.js';
import type { Snapshot } from '../../model/snapshot.js';
import { isExpired, lifecycleOf } from '../../state/checks/lifecycle.js';
import { describeOutcome, type UniformOutcome } from '../../state/checks/uniform-outcome.js';
import type { Position } from '../../state/checks/locate-flags.js';
import type { CodeScanResult } from './code-scan.js';
import type { Since } from './history.js';

export type FindingKind = 'uniform' | 'expired' | 'unreferenced';

export interface StaleFinding {
  readonly kind: FindingKind;
  readonly namespace: string;
  readonly flag: string;
  /** The flag's key in its file (`metadata.expires` for `expired`); file "" and 0:0 when unknown. */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly owner: string | null;
  readonly lifecycle: string | null;
  readonly message: string;
  /** `uniform` only. */
  readonly outcome?: { readonly kind: UniformOutcome['kind']; readonly variant?: string; readonly value?: boolean };
  /** `uniform` only: null without --repo. */
  readonly since?: Since | null;
  /** `expired` only. */
  readonly expires?: string;
}

export interface StaleReport {
  readonly state: { readonly path: string; readonly repository: string | null; readonly revision: string | null };
  /** The date the expiry was judged at, YYYY-MM-DD (UTC). */
  readonly today: string;
  readonly history: { readonly maxCommits: number; readonly commitsRead: number } | null;
  readonly code: {
    readonly root: string;
    readonly files: number;
    readonly bytes: number;
    readonly skipped: CodeScanResult['skipped'];
    readonly complete: boolean;
    readonly limit: CodeScanResult['limit'];
  } | null;
  readonly summary: { readonly flags: number; readonly uniform: number; readonly expired: number; readonly unreferenced: number };
  readonly findings: readonly StaleFinding[];
  /** The lifecycle checks as located problems (`flag.expired`, `flag.expires.invalid`). */
  readonly problems: readonly Problem[];
}

export interface ReportParts {
  readonly snapshot: Snapshot;
  readonly today: Date;
  readonly state: StaleReport['state'];
  readonly outcomes: ReadonlyMap<string, UniformOutcome>;
  readonly since: ReadonlyMap<string, Since> | undefined;
  readonly history: StaleReport['history'];
  readonly code: { readonly root: string; readonly scan: CodeScanResult } | undefined;
  readonly problems: readonly Problem[];
  /** Position of each flag's key and of its `metadata.expires`, by `namespace/flag`. */
  readonly keyAt: ReadonlyMap<string, Position>;
  readonly expiresAt: ReadonlyMap<string, Position>;
}

const NOWHERE: Position = { file: '', line: 0, column: 0 };

export function buildReport(p: ReportParts): StaleReport {
  const findings: StaleFinding[] = [];
  let flags = 0;
  for (const ns of p.snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      flags++;
      const id = `${ns.key}/${flag.key}`;
      const l = lifecycleOf(flag);
      const base = { namespace: ns.key, flag: flag.key, ...(p.keyAt.get(id) ?? NOWHERE), owner: l.owner ?? null, lifecycle: l.lifecycle ?? null };
      const o = p.outcomes.get(id);
      if (o !== undefined) {
        const since = p.since?.get(id) ?? null;
        const when = since === null ? '' : `, since ${since.bounded ? 'at least ' : ''}commit ${since.commit.slice(0, 12)} (${since.date.slice(0, 10)})`;
        findings.push({
          kind: 'uniform', ...base,
          message: `${ns.key}/${flag.key} serves ${describeOutcome(o)} to every entity${when}`,
          outcome: o.kind === 'boolean' ? { kind: o.kind, value: o.value } : { kind: o.kind, variant: o.variant },
          since,
        });
      }
      if (isExpired(flag, p.today)) {
        findings.push({ kind: 'expired', ...base, ...(p.expiresAt.get(id) ?? p.keyAt.get(id) ?? NOWHERE), message: `${ns.key}/${flag.key} is temporary and expired on ${l.expires}`, expires: l.expires! });
      }
      if (p.code !== undefined && !p.code.scan.found.has(flag.key)) {
        findings.push({ kind: 'unreferenced', ...base, message: `${ns.key}/${flag.key}: no source file under ${p.code.root} mentions \`${flag.key}\`${p.code.scan.complete ? '' : ' (scan stopped at a bound)'}` });
      }
    }
  }
  const count = (k: FindingKind) => findings.filter((f) => f.kind === k).length;
  return {
    state: p.state,
    today: p.today.toISOString().slice(0, 10),
    history: p.history,
    code: p.code === undefined ? null : { root: p.code.root, files: p.code.scan.files, bytes: p.code.scan.bytes, skipped: p.code.scan.skipped, complete: p.code.scan.complete, limit: p.code.scan.limit },
    summary: { flags, uniform: count('uniform'), expired: count('expired'), unreferenced: count('unreferenced') },
    findings,
    problems: p.problems,
  };
}
