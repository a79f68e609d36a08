/**
 * What replicas need from the engine they coordinate through (PostgreSQL: postgres-engine.ts,
 * Redis: redis-engine.ts), and nothing engine-specific: leadership of upstream polling held by one
 * replica at a time, a table of reference → revision with a cluster-wide sequence, a notification
 * on every change of it, and a refresh request any replica can send to the leader. The
 * coordinator (coordinator.ts) drives the store with it.
 *
 * A session is one connection's life: when it ends (the engine stopped, the network cut, a query
 * timed out), `onLost` fires once, leadership is gone with it, and the coordinator opens a new
 * session when the engine answers again. Notifications carry the values the engine stored; they
 * are checked here (`parseClusterRevision`) before anything reads them, so an engine answering
 * garbage never drives a build.
 */

/** One row of the cluster's table. */
export interface ClusterRevision {
  readonly reference: string;
  /** The revision id the leader found (a commit id, a manifest digest, a listing's hash). */
  readonly revision: string;
  /** Cluster-wide, increasing with every change. */
  readonly sequence: number;
}

export interface SessionHandlers {
  /** The table changed (another replica's publication, or this one's own). */
  onRevision(row: ClusterRevision): void;
  /** A replica asked the leader to look at the source now (`reference` undefined: every one). */
  onRefreshRequest(reference: string | undefined): void;
  /** The session ended; it is unusable from now on. Fires at most once. */
  onLost(err: Error): void;
}

export interface EngineSession {
  /**
   * Takes leadership when nobody holds it, keeps it when this session does; false when another
   * replica holds it. Rejects when the engine cannot be reached (then the session is lost).
   */
  lead(): Promise<boolean>;
  /** Records `revision` for `reference` (a new sequence when it changed) and notifies every replica. */
  publish(reference: string, revision: string): Promise<ClusterRevision>;
  /** Removes `reference` from the table (the leader no longer keeps it: deleted upstream, or idle). */
  withdraw(reference: string): Promise<void>;
  /** The whole table, as the engine has it now (invalid rows left out). */
  revisions(): Promise<ClusterRevision[]>;
  /** Asks the leader to look at the source now. */
  requestRefresh(reference?: string): Promise<void>;
  /** Ends the session: leadership is released at once. */
  close(): Promise<void>;
}

export interface CoordinationEngine {
  readonly type: 'postgres' | 'redis';
  /** Opens a session (connects, prepares the engine's table, subscribes). Rejects when the engine cannot be reached. */
  open(handlers: SessionHandlers): Promise<EngineSession>;
}

/** Longest reference name and revision id accepted from the engine. */
const MAX_NAME = 1024;
const MAX_REVISION = 256;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A row as the engine returned it, checked; undefined when it is not one this code could have written. */
export function parseClusterRevision(reference: unknown, revision: unknown, sequence: unknown): ClusterRevision | undefined {
  if (typeof reference !== 'string' || reference === '' || reference.length > MAX_NAME || CONTROL.test(reference)) return undefined;
  if (typeof revision !== 'string' || revision === '' || revision.length > MAX_REVISION || CONTROL.test(revision)) return undefined;
  const seq = typeof sequence === 'string' && /^\d{1,15}$/.test(sequence) ? Number(sequence) : sequence;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { reference, revision, sequence: seq };
}

/** A notification's JSON payload (`{"reference","revision","sequence"}`), checked. */
export function parseNotification(payload: string): ClusterRevision | undefined {
  if (payload.length > 4 * MAX_NAME) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  return parseClusterRevision(o.reference, o.revision, o.sequence);
}

/** A refresh request's payload: a reference name, or empty for every reference. */
export function parseRefreshRequest(payload: string): { reference: string | undefined } | undefined {
  if (payload === '') return { reference: undefined };
  if (payload.length > MAX_NAME || CONTROL.test(payload)) return undefined;
  return { reference: payload };
}
