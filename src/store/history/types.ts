/**
 * The history store's shapes: an event record (what happened to which revision of which reference,
 * when, seen by whom), the audit events kept beside them (src/auth/audit.ts), the queries
 * `/meta/history` and `/meta/audit` ask, and the store interface both backends (sqlite.ts,
 * postgres.ts) implement. Types only.
 *
 * One table holds the revision events, told apart by `kind`: `served` (a tracked reference started
 * serving a revision) and `rejected` (a revision refused with problems; the last good one stays).
 * Audit events have a table of their own in the same store (`audit_events`): their shape (who, to
 * whom, from where) shares no column with a revision's, and they are counted apart for retention,
 * so a burst of logins never pushes a served revision out and a burst of pushes no login.
 */
import type { AuditEvent, AuditType } from '../../auth/audit.js';

export type HistoryKind = 'served' | 'rejected';

/** A problem of a rejected revision as kept in the history: located, without the quoted lines. */
export interface HistoryProblem {
  readonly severity: string;
  readonly rule: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** What the store records when a revision is served or rejected. */
export interface NewHistoryEvent {
  readonly kind: HistoryKind;
  readonly reference: string;
  readonly revision: string;
  readonly author?: string;
  readonly message?: string;
  /** RFC 3339 time of the commit (or the backend's equivalent), when the source knows it. */
  readonly committedAt?: string;
  /** Epoch ms: served from (served), refused at (rejected). */
  readonly at: number;
  /** Rejected only: the first problems (bounded, see MAX_PROBLEMS) and how many there were in all. */
  readonly problems?: readonly HistoryProblem[];
  readonly problemCount?: number;
}

export interface HistoryEntry {
  /** Insertion order in the table (tie-breaker for events recorded in the same millisecond). */
  readonly seq: number;
  readonly kind: HistoryKind;
  readonly reference: string;
  readonly revision: string;
  readonly author?: string;
  readonly message?: string;
  readonly committedAt?: string;
  /** Epoch ms of the event. */
  readonly at: number;
  /** Served only: epoch ms the next served revision of the reference replaced it (absent: still served). */
  readonly until?: number;
  /** Served only: the revision that replaced it. */
  readonly replacedBy?: string;
  readonly problems?: readonly HistoryProblem[];
  readonly problemCount?: number;
  /** Who recorded it: `cluster` when replicas coordinate, else the replica's instance id. */
  readonly scope: string;
}

export interface HistoryListQuery {
  readonly reference: string;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  readonly limit: number;
  /** Continue after this entry (newest first: entries older than it). */
  readonly after?: { readonly at: number; readonly seq: number };
}

export interface HistoryRetention {
  /** Entries older than this (ms) are removed, except the one a reference serves now. */
  readonly maxAgeMs: number;
  /**
   * At most this many entries per scope; the oldest go first (never the one a reference serves now).
   * Audit events are counted apart: at most this many of them per scope too.
   */
  readonly maxEntries: number;
}

/** An audit event as the store gives it back. */
export interface AuditEntry {
  /** Insertion order in the table (tie-breaker for events recorded in the same millisecond). */
  readonly seq: number;
  /** Epoch ms of the event (its `time`). */
  readonly at: number;
  /** Who recorded it: `cluster` when replicas coordinate, else the replica's instance id. */
  readonly scope: string;
  readonly event: AuditEvent;
}

export interface AuditListQuery {
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  readonly type?: AuditType;
  /** Events whose subject or actor is this authentication record. */
  readonly authenticationId?: string;
  readonly limit: number;
  /** Continue after this event (newest first: events older than it). */
  readonly after?: { readonly at: number; readonly seq: number };
}

export interface HistoryStore {
  /** `sqlite` or `postgres`, for logs. */
  readonly kind: string;
  /**
   * Records `e` under `scope` unless it is already the latest of its kind for its reference there
   * (a replica restarting, or a second replica of a cluster, serving what is recorded), closing the
   * served entry it replaces, then applies retention. Committed before the promise resolves.
   * Returns whether a row was written.
   */
  record(scope: string, e: NewHistoryEvent, retention: HistoryRetention): Promise<boolean>;
  /** Entries of `scope`, newest first; one more than `limit` when there are more (the caller pages). */
  list(scope: string, q: HistoryListQuery): Promise<HistoryEntry[]>;
  /** The served entry of `reference` in `scope` at epoch ms `at`, if any. */
  servedAt(scope: string, reference: string, at: number): Promise<HistoryEntry | undefined>;
  /**
   * Keeps audit event `e` under `scope` unless an event with its id is already kept (then nothing is
   * written), then applies retention to the audit events of `scope`: older than `maxAgeMs` before
   * `e`'s time, and beyond the newest `maxEntries` (counted apart from the revision events).
   * Committed before the promise resolves. Returns whether a row was written.
   */
  recordAudit(scope: string, e: AuditEvent, retention: HistoryRetention): Promise<boolean>;
  /** Audit events of `scope`, newest first; one more than `limit` when there are more (the caller pages). */
  listAudit(scope: string, q: AuditListQuery): Promise<AuditEntry[]>;
  close(): Promise<void>;
}

/** Problems kept per rejected revision; the count of all is kept beside them. */
export const MAX_PROBLEMS = 20;
/** Characters kept of a problem message, a commit message or an author. */
export const MAX_TEXT = 1000;
