/**
 * `notifications.*`, `server.public_url` and `authentication.storage.*` → the sinks and the queue
 * store. The queue lives where the history does (../history/from-config.ts): the SQLite file of
 * `authentication.storage` (default `<data_dir>/auth.db`), or PostgreSQL when replicas share one.
 * Nothing is opened while no sink is configured (notifications are off by default).
 *
 * A sink's URL is kept out of everything shown: `shownUrl` is its scheme and host, and the queue
 * names the sink by a hash of its type and URL.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { resolveDataDir } from '../../config/data-dir.js';
import type { Config } from '../../config/types.js';
import { compileGlob } from '../../state/glob.js';
import type { NotificationQueueStore, Sink } from './types.js';

/** Scheme and host of `url` (no user, path, query or fragment). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** The configured sinks, checked (a webhook needs its secret; globs must parse). Throws naming the key. */
export function sinksFromConfig(config: Config): Sink[] {
  return config.notifications.sinks.map((s, index) => {
    const key = `notifications.sinks[${index}]`;
    if (s.type === 'webhook' && s.secret === undefined) throw new Error(`${key}.secret: required for a webhook sink (the key of X-Vexil-Signature)`);
    try {
      new URL(s.url);
    } catch {
      throw new Error(`${key}.url: not a URL`);
    }
    for (const p of s.references) {
      try {
        compileGlob(p);
      } catch (err) {
        throw new Error(`${key}.references: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return {
      index,
      type: s.type,
      url: s.url,
      shownUrl: shownUrl(s.url),
      key: createHash('sha256').update(`${s.type}\n${s.url}`).digest('hex').slice(0, 32),
      ...(s.secret !== undefined ? { secret: s.secret } : {}),
      references: [...s.references],
      namespaces: [...s.namespaces],
      events: [...s.events],
      timeoutMs: s.timeout,
      retries: s.retries,
      queueSize: s.queue_size,
    };
  });
}

export async function openNotificationQueue(config: Config, cwd: string): Promise<NotificationQueueStore> {
  const storage = config.authentication.storage;
  if (storage.type === 'postgres') {
    const url = storage.postgres.url;
    if (url === undefined) throw new Error('authentication.storage.postgres.url: required when authentication.storage.type is postgres');
    const { openPostgresNotificationQueue } = await import('./postgres.js');
    return openPostgresNotificationQueue({
      url,
      connectTimeoutMs: storage.postgres.connect_timeout,
      queryTimeoutMs: storage.postgres.query_timeout,
      poolWaitTimeoutMs: storage.postgres.pool_wait_timeout,
    });
  }
  const path = storage.sqlite.path !== undefined ? resolve(cwd, storage.sqlite.path) : join(resolveDataDir(config.data_dir, cwd), 'auth.db');
  const { openSqliteNotificationQueue } = await import('./sqlite.js');
  return openSqliteNotificationQueue({ path });
}
