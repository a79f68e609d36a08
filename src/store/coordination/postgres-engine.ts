/**
 * Coordination through PostgreSQL (`cluster.coordination.type: postgres`). One session is one
 * dedicated connection (never a pooled one: a LISTEN and a session-level advisory lock belong to
 * the connection that took them):
 *
 * - leadership: `pg_try_advisory_lock` on a fixed key, held by the session's connection, so the
 *   server frees it the moment that connection dies (a replica killed, a network cut noticed by the
 *   server). A leader checks its connection on every `lead()` with a round trip.
 * - the table `vexil_cluster_revisions` (reference → revision, sequence from
 *   `vexil_cluster_sequence`, created at the first session under a transaction-level advisory lock
 *   so replicas starting together do not race), written by one statement that also calls
 *   `pg_notify`, so a change and its notification commit together; an unchanged revision keeps
 *   its sequence and notifies nobody.
 * - `LISTEN vexil_cluster_revision` (changes) and `vexil_cluster_refresh` (refresh requests).
 *
 * Bounds: connecting and every statement are limited (connect timeout, query timeout, and the
 * server's statement_timeout); any failure of a statement ends the session (the coordinator opens
 * a new one), since `pg.Client` never recovers a broken connection by itself.
 */
import pg from 'pg';
import {
  parseClusterRevision,
  parseNotification,
  parseRefreshRequest,
  type ClusterRevision,
  type CoordinationEngine,
  type EngineSession,
  type SessionHandlers,
} from './engine.js';

export interface PostgresEngineOptions {
  /** postgres://user:password@host:port/database */
  readonly url: string;
  /** Opening the connection, ms (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** One statement, ms (default 5 s). */
  readonly queryTimeoutMs?: number;
}

/** Advisory lock keys, in vexil's range (the authentication store uses …0001 to …01ff). */
const LOCK_LEADER = 0x7665_7869_6c00_0200n;
const LOCK_SCHEMA = 0x7665_7869_6c00_0201n;
export const REVISION_CHANNEL = 'vexil_cluster_revision';
export const REFRESH_CHANNEL = 'vexil_cluster_refresh';

const SCHEMA = [
  'CREATE SEQUENCE IF NOT EXISTS vexil_cluster_sequence',
  `CREATE TABLE IF NOT EXISTS vexil_cluster_revisions (
     reference TEXT PRIMARY KEY,
     revision TEXT NOT NULL,
     sequence BIGINT NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
   )`,
];

const PUBLISH = `
  WITH up AS (
    INSERT INTO vexil_cluster_revisions AS t (reference, revision, sequence)
    VALUES ($1, $2, nextval('vexil_cluster_sequence'))
    ON CONFLICT (reference) DO UPDATE SET revision = EXCLUDED.revision, sequence = EXCLUDED.sequence, updated_at = now()
    WHERE t.revision <> EXCLUDED.revision
    RETURNING reference, revision, sequence
  )
  SELECT reference, revision, sequence::text AS sequence,
         pg_notify('${REVISION_CHANNEL}', json_build_object('reference', reference, 'revision', revision, 'sequence', sequence)::text) AS notified
  FROM up`;

export function createPostgresEngine(opts: PostgresEngineOptions): CoordinationEngine {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  const queryTimeoutMs = opts.queryTimeoutMs ?? 5000;

  async function open(handlers: SessionHandlers): Promise<EngineSession> {
    const client = new pg.Client({
      connectionString: opts.url,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: queryTimeoutMs,
      statement_timeout: queryTimeoutMs,
      keepAlive: true,
      application_name: 'vexil-coordination',
    });
    let ended = false;
    let leading = false;
    const lose = (err: Error) => {
      if (ended) return;
      ended = true;
      leading = false;
      client.end().catch(() => undefined);
      handlers.onLost(err);
    };
    // Required: without a listener a dropped connection's error event ends the process.
    client.on('error', (err) => lose(err));
    client.on('end', () => lose(new Error('connection to PostgreSQL ended')));
    client.on('notification', (m) => {
      const payload = m.payload ?? '';
      if (m.channel === REVISION_CHANNEL) {
        const row = parseNotification(payload);
        if (row !== undefined) handlers.onRevision(row);
      } else if (m.channel === REFRESH_CHANNEL) {
        const req = parseRefreshRequest(payload);
        if (req !== undefined) handlers.onRefreshRequest(req.reference);
      }
    });

    /** Runs one statement; any failure ends the session. */
    async function query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
      if (ended) throw new Error('the PostgreSQL coordination session has ended');
      try {
        return await client.query<R>(text, values);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        lose(e);
        throw e;
      }
    }

    try {
      await client.connect();
    } catch (err) {
      ended = true;
      client.end().catch(() => undefined);
      throw err;
    }
    try {
      await query('BEGIN');
      await query('SELECT pg_advisory_xact_lock($1)', [LOCK_SCHEMA.toString()]);
      for (const statement of SCHEMA) await query(statement);
      await query('COMMIT');
      await query(`LISTEN ${REVISION_CHANNEL}`);
      await query(`LISTEN ${REFRESH_CHANNEL}`);
    } catch (err) {
      lose(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }

    return {
      async lead() {
        if (leading) {
          await query('SELECT 1');
          return true;
        }
        const r = await query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LOCK_LEADER.toString()]);
        leading = r.rows[0]?.ok === true;
        return leading;
      },
      async publish(reference, revision) {
        if (!leading) throw new Error('only the leader publishes revisions');
        const r = await query<{ reference: string; revision: string; sequence: string }>(PUBLISH, [reference, revision]);
        const row = r.rows[0] ?? (await query<{ reference: string; revision: string; sequence: string }>(
          'SELECT reference, revision, sequence::text AS sequence FROM vexil_cluster_revisions WHERE reference = $1',
          [reference],
        )).rows[0];
        const parsed = row !== undefined ? parseClusterRevision(row.reference, row.revision, row.sequence) : undefined;
        if (parsed === undefined) throw new Error(`the cluster table holds no valid row for reference "${reference}"`);
        return parsed;
      },
      async withdraw(reference) {
        if (!leading) throw new Error('only the leader withdraws revisions');
        await query('DELETE FROM vexil_cluster_revisions WHERE reference = $1', [reference]);
      },
      async revisions() {
        const r = await query<{ reference: string; revision: string; sequence: string }>(
          'SELECT reference, revision, sequence::text AS sequence FROM vexil_cluster_revisions',
        );
        const rows: ClusterRevision[] = [];
        for (const row of r.rows) {
          const parsed = parseClusterRevision(row.reference, row.revision, row.sequence);
          if (parsed !== undefined) rows.push(parsed);
        }
        return rows;
      },
      async requestRefresh(reference) {
        await query('SELECT pg_notify($1, $2)', [REFRESH_CHANNEL, reference ?? '']);
      },
      async close() {
        if (ended) return;
        ended = true;
        leading = false;
        // Ending the connection releases the advisory lock and the LISTENs.
        await client.end().catch(() => undefined);
      },
    };
  }

  return { type: 'postgres', open };
}
