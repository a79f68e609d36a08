/**
 * Coordination through Redis (`cluster.coordination.type: redis`), behind the same interface as
 * PostgreSQL (engine.ts). One session is two connections (a subscribed connection can run no
 * other command): one for commands, one subscribed to the channels.
 *
 * - leadership: a lease, `SET vexil:cluster:leader <session id> NX PX <lease>`, renewed by the
 *   holder on every `lead()` (only while the key still holds its id) and deleted on close (only
 *   while it does); a leader that dies without closing loses it when the lease runs out.
 * - the table: hash `vexil:cluster:revisions` (reference → `{"reference","revision","sequence"}`),
 *   sequence from `INCR vexil:cluster:sequence`; written by one script that also publishes the row
 *   on `vexil:cluster:revision`, and refuses to write for a session that does not hold the lease
 *   (a leader whose lease ran out while it was paused cannot overwrite its successor's work). An
 *   unchanged revision keeps its sequence and is not published.
 * - refresh requests on `vexil:cluster:refresh`.
 *
 * Bounds: connecting and every command are limited (connect timeout, a command timeout); the
 * clients never reconnect nor queue offline: a dropped connection or a command that fails or
 * times out ends the session, and the coordinator opens a new one when Redis answers again.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import {
  parseNotification,
  parseRefreshRequest,
  type ClusterRevision,
  type CoordinationEngine,
  type EngineSession,
  type SessionHandlers,
} from './engine.js';

export interface RedisEngineOptions {
  /** redis://[user:password@]host:port[/db] or rediss://… */
  readonly url: string;
  /** How long a lease lasts without renewal, ms. */
  readonly leaseMs: number;
  /** Opening a connection, ms (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** One command, ms (default 5 s). */
  readonly commandTimeoutMs?: number;
}

export const LEADER_KEY = 'vexil:cluster:leader';
export const TABLE_KEY = 'vexil:cluster:revisions';
export const SEQUENCE_KEY = 'vexil:cluster:sequence';
export const REVISION_CHANNEL = 'vexil:cluster:revision';
export const REFRESH_CHANNEL = 'vexil:cluster:refresh';

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
/** KEYS: table, sequence, leader; ARGV: reference, revision, channel, session id. */
const PUBLISH = `
if redis.call('GET', KEYS[3]) ~= ARGV[4] then return redis.error_reply('NOTLEADER this session does not hold the lease') end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, row = pcall(cjson.decode, current)
  if ok and type(row) == 'table' and row.revision == ARGV[2] then return current end
end
local seq = redis.call('INCR', KEYS[2])
local encoded = cjson.encode({reference = ARGV[1], revision = ARGV[2], sequence = seq})
redis.call('HSET', KEYS[1], ARGV[1], encoded)
redis.call('PUBLISH', ARGV[3], encoded)
return encoded`;

export function createRedisEngine(opts: RedisEngineOptions): CoordinationEngine {
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  const commandTimeoutMs = opts.commandTimeoutMs ?? 5000;
  const { leaseMs } = opts;

  async function open(handlers: SessionHandlers): Promise<EngineSession> {
    const id = randomUUID();
    const client = createClient({
      url: opts.url,
      // CLIENT LIST shows which session a connection belongs to (the lease holds the same id).
      name: `vexil-coordination-${id}`,
      disableOfflineQueue: true,
      socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: false, keepAlive: true },
    });
    const subscriber = client.duplicate();
    let ended = false;
    let leading = false;
    const destroy = () => {
      for (const c of [client, subscriber]) {
        try {
          if (c.isOpen) c.destroy();
        } catch {
          // already closed
        }
      }
    };
    const lose = (err: Error) => {
      if (ended) return;
      ended = true;
      leading = false;
      destroy();
      handlers.onLost(err);
    };
    // Required: an error event without a listener ends the process.
    for (const c of [client, subscriber]) {
      c.on('error', (err: unknown) => lose(err instanceof Error ? err : new Error(String(err))));
      c.on('end', () => lose(new Error('connection to Redis ended')));
    }

    /** Runs one command with a time limit; any failure ends the session. */
    async function command<T>(what: string, run: () => Promise<T>): Promise<T> {
      if (ended) throw new Error('the Redis coordination session has ended');
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          run(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`Redis ${what} took longer than ${commandTimeoutMs} ms`)), commandTimeoutMs);
          }),
        ]);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        // A refusal by the script is an answer, not a lost connection.
        if (!/^NOTLEADER/.test(e.message)) lose(e);
        throw e;
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    }

    try {
      await client.connect();
      await subscriber.connect();
      await subscriber.subscribe(REVISION_CHANNEL, (message) => {
        const row = parseNotification(message);
        if (row !== undefined) handlers.onRevision(row);
      });
      await subscriber.subscribe(REFRESH_CHANNEL, (message) => {
        const req = parseRefreshRequest(message);
        if (req !== undefined) handlers.onRefreshRequest(req.reference);
      });
    } catch (err) {
      ended = true;
      destroy();
      throw err;
    }

    return {
      async lead() {
        if (leading) {
          const renewed = await command('lease renewal', () => client.eval(RENEW, { keys: [LEADER_KEY], arguments: [id, String(leaseMs)] }));
          if (renewed === 1) return true;
          leading = false;
        }
        const set = await command('lease', () => client.set(LEADER_KEY, id, { condition: 'NX', expiration: { type: 'PX', value: leaseMs } }));
        leading = set === 'OK';
        return leading;
      },
      async publish(reference, revision) {
        if (!leading) throw new Error('only the leader publishes revisions');
        const reply = await command('publish', () =>
          client.eval(PUBLISH, { keys: [TABLE_KEY, SEQUENCE_KEY, LEADER_KEY], arguments: [reference, revision, REVISION_CHANNEL, id] }),
        );
        const row = typeof reply === 'string' ? parseNotification(reply) : undefined;
        if (row === undefined) throw new Error(`the cluster table holds no valid row for reference "${reference}"`);
        return row;
      },
      async withdraw(reference) {
        if (!leading) throw new Error('only the leader withdraws revisions');
        await command('withdraw', () => client.hDel(TABLE_KEY, reference));
      },
      async revisions() {
        const all = await command('table read', () => client.hGetAll(TABLE_KEY));
        const rows: ClusterRevision[] = [];
        for (const value of Object.values(all as Record<string, string>)) {
          const row = parseNotification(String(value));
          if (row !== undefined) rows.push(row);
        }
        return rows;
      },
      async requestRefresh(reference) {
        await command('refresh request', () => client.publish(REFRESH_CHANNEL, reference ?? ''));
      },
      async close() {
        if (ended) return;
        if (leading) {
          await command('lease release', () => client.eval(RELEASE, { keys: [LEADER_KEY], arguments: [id] })).catch(() => undefined);
        }
        ended = true;
        leading = false;
        for (const c of [subscriber, client]) {
          try {
            if (c.isOpen) await c.close();
          } catch {
            // closed meanwhile
          }
        }
      },
    };
  }

  return { type: 'redis', open };
}
