/**
 * The coordination engines the coordinator suite runs against, each a real server from
 * test/support/throwaway-db.ts, with what the suite does to it: stop and start it again, and kill
 * the leader's session from the server side (as when the leader's process or host dies).
 */
import pg from 'pg';
import { createClient } from 'redis';
import type { CoordinationEngine } from '../../../src/store/coordination/engine.js';
import { createPostgresEngine, REVISION_CHANNEL as PG_REVISION_CHANNEL } from '../../../src/store/coordination/postgres-engine.js';
import { createRedisEngine, LEADER_KEY, REVISION_CHANNEL as REDIS_REVISION_CHANNEL, SEQUENCE_KEY, TABLE_KEY } from '../../../src/store/coordination/redis-engine.js';
import { postgresUnavailableReason, redisUnavailableReason, startPostgres, startRedis } from '../../support/throwaway-db.js';

export interface EngineKit {
  /** The server's URL (cluster.coordination.<type>.url). */
  readonly url: string;
  /** A new engine (one per replica) on the running server. */
  engine(): CoordinationEngine;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Writes a row of the table without notifying anybody (a notification lost). */
  writeRowSilently(reference: string, revision: string): Promise<void>;
  /** Sends `payload` on the revision channel as any client of the engine could. */
  notifyRaw(payload: string): Promise<void>;
  /** Ends the connections of the session holding leadership, from the server. */
  killLeader(): Promise<void>;
  close(): Promise<void>;
}

export interface EngineKind {
  readonly name: 'postgres' | 'redis';
  unavailableReason(): string | undefined;
  start(opts: { leaseMs: number }): Promise<EngineKit>;
}

export const ENGINES: readonly EngineKind[] = [
  {
    name: 'postgres',
    unavailableReason: postgresUnavailableReason,
    async start() {
      const server = await startPostgres({ database: 'vexil_cluster' });
      return {
        url: server.url,
        engine: () => createPostgresEngine({ url: server.url, connectTimeoutMs: 2000, queryTimeoutMs: 2000 }),
        stop: () => server.stop(),
        start: () => server.start(),
        async writeRowSilently(reference, revision) {
          const admin = new pg.Client({ connectionString: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            await admin.query(
              `UPDATE vexil_cluster_revisions SET revision = $2, sequence = nextval('vexil_cluster_sequence') WHERE reference = $1`,
              [reference, revision],
            );
          } finally {
            await admin.end();
          }
        },
        async notifyRaw(payload) {
          const admin = new pg.Client({ connectionString: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            await admin.query('SELECT pg_notify($1, $2)', [PG_REVISION_CHANNEL, payload]);
          } finally {
            await admin.end();
          }
        },
        async killLeader() {
          const admin = new pg.Client({ connectionString: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            await admin.query(
              `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`,
            );
          } finally {
            await admin.end();
          }
        },
        close: () => server.close(),
      };
    },
  },
  {
    name: 'redis',
    unavailableReason: redisUnavailableReason,
    async start({ leaseMs }) {
      const server = await startRedis();
      return {
        url: server.url,
        engine: () => createRedisEngine({ url: server.url, leaseMs, connectTimeoutMs: 2000, commandTimeoutMs: 2000 }),
        stop: () => server.stop(),
        start: () => server.start(),
        async writeRowSilently(reference, revision) {
          const admin = createClient({ url: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            const sequence = await admin.incr(SEQUENCE_KEY);
            await admin.hSet(TABLE_KEY, reference, JSON.stringify({ reference, revision, sequence }));
          } finally {
            await admin.close();
          }
        },
        async notifyRaw(payload) {
          const admin = createClient({ url: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            await admin.publish(REDIS_REVISION_CHANNEL, payload);
          } finally {
            await admin.close();
          }
        },
        async killLeader() {
          const admin = createClient({ url: server.url });
          admin.on('error', () => undefined);
          await admin.connect();
          try {
            const holder = await admin.get(LEADER_KEY);
            if (holder === null) throw new Error('nobody holds the lease');
            const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
            for (const line of list.split('\n')) {
              if (!line.includes(`name=vexil-coordination-${holder}`)) continue;
              const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
              if (id !== undefined) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
            }
          } finally {
            await admin.close();
          }
        },
        close: () => server.close(),
      };
    },
  },
];
