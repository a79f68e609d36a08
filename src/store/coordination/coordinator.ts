/**
 * The coordinator: drives one replica's snapshot store as the cluster's leader, a follower, or on
 * its own, through a coordination engine (engine.ts). Every process taking part (each worker of
 * `server.workers` included) is one participant, so one process in the whole cluster lists the
 * source per poll interval.
 *
 * - Every `tickMs` it opens a session when it has none, then asks for leadership (taken, kept or
 *   refused). Leader: the store polls the source as usual; each swap is published (the engine's
 *   table and a notification); on taking the lead it refreshes at once and publishes what it
 *   serves; a refresh request from another replica is a refresh. Follower: the store's poll timer
 *   is paused; a notification newer than the last one seen for its reference makes the store
 *   build exactly that revision (serveRevision) and swap, and only then do the store's listeners
 *   (the streams) hear of it; every `backstopMs` (±10%) the engine's table is read again in case a
 *   notification was lost, and a reference this replica keeps that the cluster does not list (one
 *   built because a request here named it, or one the leader dropped: deleted upstream) is
 *   refreshed from the source at that pace.
 * - Engine lost (stopped, unreachable, a statement timed out): the session ends, the replica is
 *   `standalone` and unhealthy, its store polls on its own; the next tick that reaches the engine
 *   rejoins as leader or follower, without a restart. A dead leader's session frees leadership
 *   (PostgreSQL at once, Redis when its lease runs out); a follower takes it on its next tick.
 * - Lag: while healthy, a reference whose served revision differs from the cluster's records
 *   since when; with `maxLagMs`, the status says so once it lasts longer (/ready reads it).
 *
 * Bounds: one tick at a time (the next is set after one ends), one backstop timer, timers do not
 * keep the process alive; notifications are checked by the engine and deduplicated here by
 * sequence; builds go through the store's serial queue.
 */
import type { ServeOutcome } from '../serve-revision.js';
import type { CoordinationStatus, RefStatus, StoreEvent, StoreLogger } from '../types.js';
import type { ClusterRevision, CoordinationEngine, EngineSession } from './engine.js';

/** What the coordinator needs of the store (snapshot-store.ts's ManagedSnapshotStore). */
export interface CoordinatedTarget {
  readonly defaultReference: string;
  refresh(): Promise<void>;
  /** A refresh asked for by a request: coalesced, at most one look a second per reference (refresh-gate.ts). */
  requestRefresh(references?: readonly string[]): Promise<void>;
  serveRevision(ref: string, revisionId: string): Promise<ServeOutcome>;
  confirmRevision(ref: string, revisionId: string, atMs: number): void;
  servedRevisions(): Map<string, string | undefined>;
  setPolling(enabled: boolean): void;
  subscribe(listener: (event: StoreEvent) => void): () => void;
}

export interface CoordinatorOptions {
  readonly store: CoordinatedTarget;
  readonly engine: CoordinationEngine;
  readonly logger: StoreLogger;
  /** How often leadership is asked for or renewed and a lost engine tried again, ms. */
  readonly tickMs: number;
  /** A follower's comparison with the engine's table, ms (jittered ±10%). */
  readonly backstopMs: number;
  /** Lagging the cluster longer than this is reported (unset: never). */
  readonly maxLagMs?: number;
  /** [0, 1) (tests). */
  readonly random?: () => number;
  /** Epoch ms now (tests). */
  readonly nowMs?: () => number;
}

export interface Coordinator {
  /** Joins the cluster (first tick now); resolves after the first tick. */
  start(): Promise<void>;
  status(): CoordinationStatus;
  /** The cluster's revision of each reference (as last seen). */
  clusterRevisions(): ReadonlyMap<string, ClusterRevision>;
  /** Status rows with `clusterRevision` and, with maxLagMs, `lagging`. */
  decorate(rows: readonly RefStatus[]): RefStatus[];
  /** Leader or standalone: refresh the store now. Follower: ask the leader to (resolves once asked). */
  refresh(): Promise<void>;
  /**
   * A refresh a request asked for (a webhook, POST /meta/refresh): leader or standalone, through the
   * store's refresh gate; follower, the leader is asked, once per reference (undefined: all).
   */
  requestRefresh(references?: readonly string[]): Promise<void>;
  /** Leaves the cluster: leadership released at once. */
  close(): Promise<void>;
}

export function createCoordinator(opts: CoordinatorOptions): Coordinator {
  const { store, engine, logger, tickMs, backstopMs, maxLagMs } = opts;
  const random = opts.random ?? Math.random;
  const nowMs = opts.nowMs ?? Date.now;
  let session: EngineSession | undefined;
  let role: CoordinationStatus['role'] = 'standalone';
  let closed = false;
  let tickTimer: NodeJS.Timeout | undefined;
  let backstopTimer: NodeJS.Timeout | undefined;
  /** Whether the last attempt to reach the engine failed (logged once per outage). */
  let unreachable = false;
  const cluster = new Map<string, ClusterRevision>();
  /** Epoch ms since when a reference has served another revision than the cluster's. */
  const lagSince = new Map<string, number>();

  const unsubscribe = store.subscribe((e) => {
    if (e.type === 'dropped') {
      // The leader no longer keeps it (deleted upstream, or idle): followers that do refresh it at the backstop's pace.
      cluster.delete(e.reference);
      const s = session;
      if (role === 'leader' && s !== undefined) {
        s.withdraw(e.reference).catch((err: unknown) => logger.warn({ reference: e.reference, err: message(err) }, 'could not withdraw a reference from the cluster'));
      }
      return;
    }
    if (e.type !== 'swap') return;
    updateLag();
    if (role === 'leader' && session !== undefined) void publish(session, e.reference, e.snapshot.revision);
  });

  async function publish(s: EngineSession, reference: string, revision: string): Promise<void> {
    try {
      const row = await s.publish(reference, revision);
      remember(row);
    } catch (err) {
      logger.warn({ reference, revision, err: message(err) }, 'could not publish a revision to the cluster');
    }
  }

  /** Keeps `row` unless it is older than, or the same as, what is known of its reference. */
  function remember(row: ClusterRevision): boolean {
    const known = cluster.get(row.reference);
    if (known !== undefined && (row.sequence < known.sequence || (row.sequence === known.sequence && row.revision === known.revision))) return false;
    cluster.set(row.reference, row);
    return true;
  }

  function updateLag(): void {
    const at = nowMs();
    const served = store.servedRevisions();
    for (const [ref, row] of cluster) {
      const mine = served.get(ref);
      if (session === undefined || mine === undefined || mine === row.revision) lagSince.delete(ref);
      else if (!lagSince.has(ref)) lagSince.set(ref, at);
    }
    for (const ref of lagSince.keys()) if (!cluster.has(ref)) lagSince.delete(ref);
  }

  /** A follower builds the cluster's revision of a reference it keeps. */
  function follow(row: ClusterRevision): void {
    store
      .serveRevision(row.reference, row.revision)
      .then((outcome) => {
        if (outcome === 'served') logger.info({ reference: row.reference, revision: row.revision, sequence: row.sequence }, 'serving the cluster revision');
        else if (outcome === 'refused') logger.warn({ reference: row.reference, revision: row.revision }, 'the cluster revision could not be served here (see /meta/snapshots)');
        updateLag();
      })
      .catch((err: unknown) => logger.error({ reference: row.reference, err: message(err) }, 'building the cluster revision failed'));
  }

  function onRevision(row: ClusterRevision): void {
    if (closed || !remember(row)) return;
    updateLag();
    if (role === 'follower') follow(row);
  }

  function onRefreshRequest(reference: string | undefined): void {
    if (closed || role !== 'leader') return;
    logger.info({ ...(reference !== undefined ? { reference } : {}) }, 'refresh requested by another replica');
    // Through the gate: however many replicas ask, one look a second per reference.
    store.requestRefresh(reference === undefined ? undefined : [reference]).catch((err: unknown) => logger.error({ err: message(err) }, 'requested refresh failed'));
  }

  function onLost(err: Error): void {
    session = undefined;
    const was = role;
    role = 'standalone';
    store.setPolling(true);
    lagSince.clear();
    if (!closed) logger.warn({ err: err.message, was }, 'coordination engine lost: polling the source on our own until it is back');
  }

  /** The engine's table, then: serve what differs, refresh what the cluster does not list. */
  async function reconcile(s: EngineSession): Promise<void> {
    const rows = await s.revisions();
    const listed = new Set<string>();
    // The table is the truth: it also corrects a notification that was not (a forged sequence).
    for (const row of rows) {
      listed.add(row.reference);
      cluster.set(row.reference, row);
    }
    const served = store.servedRevisions();
    let unlisted = false;
    for (const [ref, mine] of served) {
      const row = cluster.get(ref);
      if (row === undefined || !listed.has(ref)) unlisted = true;
      else if (mine !== row.revision) follow(row);
    }
    // Prebuilt references the leader lists and this store has not built yet.
    for (const row of cluster.values()) if (!served.has(row.reference)) follow(row);
    updateLag();
    if (unlisted && role === 'follower') await store.refresh();
  }

  function scheduleBackstop(): void {
    if (closed || backstopTimer !== undefined) return;
    const wait = Math.round(backstopMs * (0.9 + 0.2 * random()));
    backstopTimer = setTimeout(() => {
      backstopTimer = undefined;
      const s = session;
      const run = role === 'follower' && s !== undefined ? reconcile(s) : Promise.resolve();
      run
        .catch((err: unknown) => logger.warn({ err: message(err) }, 'backstop comparison with the cluster failed'))
        .finally(scheduleBackstop);
    }, wait);
    backstopTimer.unref();
  }

  async function becomeLeader(s: EngineSession): Promise<void> {
    role = 'leader';
    store.setPolling(true);
    logger.info({ engine: engine.type }, 'leading the cluster: polling the source for every replica');
    await store.refresh();
    if (session !== s || role !== 'leader') return;
    for (const [ref, revision] of store.servedRevisions()) if (revision !== undefined) await publish(s, ref, revision);
  }

  async function becomeFollower(s: EngineSession): Promise<void> {
    role = 'follower';
    store.setPolling(false);
    logger.info({ engine: engine.type }, 'following the cluster: building the revisions the leader publishes');
    await reconcile(s);
  }

  async function tick(): Promise<void> {
    if (closed) return;
    if (session === undefined) {
      try {
        // A new session's table is the truth (an engine restarted without its data counts its sequence from 1 again).
        cluster.clear();
        session = await engine.open({ onRevision, onRefreshRequest, onLost });
        if (closed) {
          await session.close();
          return;
        }
        logger.info({ engine: engine.type }, unreachable ? 'coordination engine reachable again: rejoining the cluster' : 'joined the cluster');
        unreachable = false;
      } catch (err) {
        if (!unreachable) logger.warn({ engine: engine.type, err: message(err) }, 'coordination engine unreachable: polling the source on our own');
        unreachable = true;
        return;
      }
    }
    const s = session;
    try {
      const leads = await s.lead();
      // In the background: a refresh may take long, and the next tick must renew the lease meanwhile.
      if (leads && role !== 'leader') void becomeLeader(s).catch((err: unknown) => logger.warn({ err: message(err) }, 'taking the lead failed'));
      else if (!leads && role !== 'follower') void becomeFollower(s).catch((err: unknown) => logger.warn({ err: message(err) }, 'joining as a follower failed'));
      else if (role === 'follower') {
        // The cluster vouches for what the leader last confirmed: a follower in step is not stale.
        const at = nowMs();
        for (const row of cluster.values()) store.confirmRevision(row.reference, row.revision, at);
      }
    } catch (err) {
      // A lost session was reported by onLost; anything else is logged.
      if (session === s) logger.warn({ err: message(err) }, 'coordination step failed');
    }
  }

  function scheduleTick(): void {
    if (closed) return;
    tickTimer = setTimeout(() => {
      tickTimer = undefined;
      tick().finally(scheduleTick);
    }, tickMs);
    tickTimer.unref();
  }

  return {
    async start() {
      await tick();
      scheduleTick();
      scheduleBackstop();
    },
    status: () => ({ type: engine.type, role, healthy: session !== undefined }),
    clusterRevisions: () => cluster,
    decorate(rows) {
      updateLag();
      const at = nowMs();
      return rows.map((row) => {
        const c = cluster.get(row.reference);
        if (c === undefined) return row;
        const since = lagSince.get(row.reference);
        const lagging =
          maxLagMs !== undefined && since !== undefined && at - since > maxLagMs
            ? `reference "${row.reference}" has served another revision than the cluster's for ${Math.round((at - since) / 1000)}s (limit ${Math.round(maxLagMs / 1000)}s)`
            : undefined;
        return { ...row, clusterRevision: c.revision, ...(lagging !== undefined ? { lagging } : {}) };
      });
    },
    async refresh() {
      const s = session;
      if (role === 'follower' && s !== undefined) {
        await s.requestRefresh();
        return;
      }
      await store.refresh();
    },
    async requestRefresh(references) {
      const s = session;
      if (role === 'follower' && s !== undefined) {
        if (references === undefined) await s.requestRefresh();
        else for (const reference of references) await s.requestRefresh(reference);
        return;
      }
      await store.requestRefresh(references);
    },
    async close() {
      closed = true;
      unsubscribe();
      if (tickTimer !== undefined) clearTimeout(tickTimer);
      if (backstopTimer !== undefined) clearTimeout(backstopTimer);
      const s = session;
      session = undefined;
      role = 'standalone';
      if (s !== undefined) await s.close();
    },
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
