/**
 * `history.*` and `authentication.storage.*` → the history store, its scope and retention. The
 * history lives in vexil's data store, the database of `authentication.storage`: the SQLite file
 * (default `<data_dir>/auth.db`), or PostgreSQL when replicas share one. Drivers are loaded on use.
 *
 * Scope: `cluster` when `cluster.coordination` is on (recorded once per cluster), else this
 * replica's instance id: the host name, with the worker slot when `server.workers` runs several.
 * Audit events use the same scope without the worker slot: each worker records the same swaps (so
 * each keeps its own revision history), but an audit event happens on one worker only, and every
 * worker of a replica answers `/meta/audit` with the replica's whole trail.
 */
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAge } from '../../config/age.js';
import { resolveDataDir } from '../../config/data-dir.js';
import type { Config } from '../../config/types.js';
import { CLUSTER_SCOPE } from './recorder.js';
import type { HistoryRetention, HistoryStore } from './types.js';

export interface OpenedHistory {
  readonly store: HistoryStore;
  readonly scope: string;
  /** The scope of audit events: `cluster`, or this replica's host name (all its workers). */
  readonly auditScope: string;
  readonly retention: HistoryRetention;
  /** Where it is (a file path, or the PostgreSQL host and database): safe to log. */
  readonly location: string;
}

export interface OpenHistoryOptions {
  readonly cwd: string;
  /** `server.workers` slot of this process, when there are several. */
  readonly workerSlot?: number;
}

/** This replica's instance id (the scope of its records when replicas do not coordinate). */
export function instanceId(workerSlot?: number): string {
  return workerSlot === undefined ? hostname() : `${hostname()}/worker-${workerSlot}`;
}

export async function openHistoryFromConfig(config: Config, opts: OpenHistoryOptions): Promise<OpenedHistory> {
  const retention: HistoryRetention = {
    maxAgeMs: parseAge(config.history.retention.max_age),
    maxEntries: config.history.retention.max_entries,
  };
  const coordinated = config.cluster.coordination.type !== 'none';
  const scope = coordinated ? CLUSTER_SCOPE : instanceId(opts.workerSlot);
  const auditScope = coordinated ? CLUSTER_SCOPE : instanceId();
  const storage = config.authentication.storage;
  if (storage.type === 'postgres') {
    const url = storage.postgres.url;
    if (url === undefined) throw new Error('authentication.storage.postgres.url: required when authentication.storage.type is postgres');
    let location = 'postgres (unparsable URL)';
    try {
      const u = new URL(url);
      location = `postgres://${u.host}${u.pathname}`;
    } catch {
      // kept as is
    }
    const { openPostgresHistoryStore } = await import('./postgres.js');
    const store = await openPostgresHistoryStore({
      url,
      connectTimeoutMs: storage.postgres.connect_timeout,
      queryTimeoutMs: storage.postgres.query_timeout,
      poolWaitTimeoutMs: storage.postgres.pool_wait_timeout,
    }).catch((err: unknown) => {
      throw cannotOpen(location, err);
    });
    return { store, scope, auditScope, retention, location };
  }
  const path =
    storage.sqlite.path !== undefined ? resolve(opts.cwd, storage.sqlite.path) : join(resolveDataDir(config.data_dir, opts.cwd), 'auth.db');
  const { openSqliteHistoryStore } = await import('./sqlite.js');
  try {
    return { store: openSqliteHistoryStore({ path }), scope, auditScope, retention, location: path };
  } catch (err) {
    throw cannotOpen(path, err);
  }
}

/** The database is the authentication store's (`authentication.storage`): its error names it so. */
function cannotOpen(location: string, err: unknown): Error {
  return new Error(`cannot open the authentication database ${location}: ${err instanceof Error ? err.message : String(err)} (it also holds the served-revision history)`);
}
