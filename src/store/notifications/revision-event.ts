/**
 * A served or rejected revision (as the history recorded it, ../history/recorder.ts) → the `data`
 * of its notification: `{reference, revision, previousRevision, changes, impact?, problems?}`.
 *
 * `changes` is the semantic diff against the snapshot the reference served before (src/diff, the
 * structure `vexil diff --format json` prints) with `text`, the words `vexil diff` writes
 * (format-text.ts); `impact` is the impact preview over the head's flag test contexts, when it has
 * some (as `GET /api/v1/diff` samples them: DEFAULT_IMPACT_ENTITIES synthetic entities). A rejected
 * revision has no snapshot to compare: `changes` is null and `problems` lists what was refused
 * (the first MAX_PROBLEMS, with `problemCount`). The first revision a process serves after it
 * starts has no previous snapshot in memory: `previousRevision` is the one the history had served
 * before (null when none), built by its id to diff against (notifier.ts `snapshotOf`); when it
 * cannot be built (a backend without old revisions), `changes` is null.
 *
 * A sink's `namespaces` narrow the diff (namespaces, summary, impact) to those namespaces; a served
 * revision that changes none of them is not that sink's event (`forSink` answers undefined).
 *
 * Bounds: the diff and the impact run in time slices (SLICE_MS of work, then the event loop's
 * other work), never as one block on the serving thread.
 */
import { DEFAULT_IMPACT_ENTITIES } from '../../diff/impact.js';
import { formatText } from '../../diff/format-text.js';
import { diffReportSteps } from '../../diff/report.js';
import type { Steps } from '../../diff/steps.js';
import type { DiffReport, NamespaceDiff } from '../../diff/types.js';
import { MAX_PROBLEMS } from '../history/types.js';
import type { RecordedEvent } from '../history/recorder.js';
import { testContextsOf } from '../test-contexts.js';

const SLICE_MS = 2;

export interface ChangesJson {
  readonly summary: DiffReport['summary'];
  readonly namespaces: readonly NamespaceDiff[];
  /** The diff as `vexil diff --format text` writes it. */
  readonly text: string;
}

export interface RevisionEventData {
  readonly reference: string;
  readonly revision: string;
  readonly previousRevision: string | null;
  readonly author?: string;
  readonly message?: string;
  readonly committedAt?: string;
  readonly changes: ChangesJson | null;
  readonly impact?: DiffReport['impact'];
  readonly problems?: ReadonlyArray<{ severity: string; rule: string; file: string; line: number; column: number; message: string }>;
  readonly problemCount?: number;
}

/** The event computed once; `forSink` narrows it to a sink's namespaces. */
export interface RevisionEvent {
  readonly kind: 'served' | 'rejected';
  readonly reference: string;
  readonly revision: string;
  readonly at: number;
  /** The full diff (served, with a previous snapshot). */
  readonly report?: DiffReport;
  forSink(namespaces: readonly string[]): RevisionEventData | undefined;
}

/** Runs `steps` in slices of SLICE_MS, letting other work run between them. */
async function sliced<T>(steps: Steps<T>): Promise<T> {
  let started = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (performance.now() - started > SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = performance.now();
    }
  }
}

export async function revisionEvent(e: RecordedEvent): Promise<RevisionEvent> {
  if (e.kind === 'rejected') {
    const r = e.rejected;
    const data: RevisionEventData = {
      reference: e.reference,
      revision: r.revision.id,
      previousRevision: e.previous?.revision ?? null,
      ...meta(r.revision.meta),
      changes: null,
      problems: r.problems.slice(0, MAX_PROBLEMS).map((p) => ({ severity: p.severity, rule: p.rule, file: p.file, line: p.line, column: p.column, message: p.message })),
      problemCount: r.problems.length,
    };
    return { kind: 'rejected', reference: e.reference, revision: r.revision.id, at: e.at, forSink: () => data };
  }
  const base = { reference: e.reference, revision: e.revision.id, ...meta(e.revision.meta) };
  if (e.previous === undefined || e.next === undefined) {
    const data: RevisionEventData = { ...base, previousRevision: e.previous?.revision ?? e.previousRevision ?? null, changes: null };
    return { kind: 'served', reference: e.reference, revision: e.revision.id, at: e.at, forSink: () => data };
  }
  const contexts = testContextsOf(e.next);
  const report = await sliced(
    diffReportSteps(e.previous, e.next, contexts.length > 0 ? { impact: { entities: DEFAULT_IMPACT_ENTITIES, contexts } } : {}),
  );
  const previousRevision = e.previous.revision;
  return {
    kind: 'served',
    reference: e.reference,
    revision: e.revision.id,
    at: e.at,
    report,
    forSink(namespaces) {
      const narrowed = namespaces.length === 0 ? report : narrow(report, namespaces);
      if (namespaces.length > 0 && !narrowed.changed) return undefined;
      return {
        ...base,
        previousRevision,
        changes: { summary: narrowed.summary, namespaces: narrowed.namespaces, text: formatText(narrowed, false) },
        ...(narrowed.impact !== undefined ? { impact: narrowed.impact } : {}),
      };
    },
  };
}

function meta(m: { author?: string; message?: string; at?: string } | undefined) {
  return {
    ...(m?.author !== undefined ? { author: m.author } : {}),
    ...(m?.message !== undefined ? { message: m.message } : {}),
    ...(m?.at !== undefined ? { committedAt: m.at } : {}),
  };
}

/** `report` with only `namespaces`' changes (summary and impact recounted). */
export function narrow(report: DiffReport, namespaces: readonly string[]): DiffReport {
  const keep = new Set(namespaces);
  const ns = report.namespaces.filter((n) => keep.has(n.key));
  const count = <T extends { status: string }>(items: readonly T[], status: string) => items.filter((i) => i.status === status).length;
  const flags = ns.flatMap((n) => n.flags);
  const segments = ns.flatMap((n) => n.segments);
  return {
    base: report.base,
    head: report.head,
    changed: ns.length > 0,
    summary: {
      namespacesAdded: count(ns, 'added'),
      namespacesRemoved: count(ns, 'removed'),
      namespacesChanged: count(ns, 'changed'),
      flagsAdded: count(flags, 'added'),
      flagsRemoved: count(flags, 'removed'),
      flagsChanged: count(flags, 'changed'),
      segmentsAdded: count(segments, 'added'),
      segmentsRemoved: count(segments, 'removed'),
      segmentsChanged: count(segments, 'changed'),
    },
    namespaces: ns,
    ...(report.impact !== undefined ? { impact: { ...report.impact, flags: report.impact.flags.filter((f) => keep.has(f.namespace)) } } : {}),
  };
}
