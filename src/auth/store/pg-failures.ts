/**
 * Which failures of the PostgreSQL driver mean "the database is unavailable now" rather than "the
 * database refused this statement", and the wrapper that turns the first kind into
 * StoreUnavailableError for every method of a store. Unavailable: the connection could not be
 * opened or was lost (refused, reset, unreachable, terminated, the server shutting down or not
 * accepting connections yet), a bound was hit (connect, pool wait, query, statement_timeout), the
 * server is out of a resource (connections, disk, memory) or read-only (a standby after a
 * failover). Anything else (a constraint violation, a schema problem) stays what it was: a fault.
 */
import { StoreUnavailableError, wrapMethods, type AuthStore } from './types.js';

/** Node socket errors that mean the server cannot be reached. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLSTATEs (exact) that mean the server cannot serve now. */
const SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovery)
  '57014', // query_canceled: statement_timeout
  '25006', // read_only_sql_transaction: a standby
]);

/** SQLSTATE classes: 08 connection exception, 53 insufficient resources, 58 system error (I/O). */
const SQLSTATE_CLASSES = new Set(['08', '53', '58']);

/** The driver's own messages for a lost connection or a bound that was hit (pg 8, pg-pool 3). */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // unexpectedly / due to connection timeout
  /^timeout exceeded when trying to connect$/, // pool wait
  /^Query read timeout$/, // query_timeout
  /^timeout expired$/, // connectionTimeoutMillis of one client
  /^Client has encountered a connection error and is not queryable$/,
];

export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SQLSTATES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && SQLSTATE_CLASSES.has(code.slice(0, 2))) return true;
  }
  if (DRIVER_MESSAGES.some((re) => re.test(err.message))) return true;
  // Several addresses tried (localhost: ::1 and 127.0.0.1): Node reports them together.
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isUnavailable);
  return false;
}

/** `store` with every failure of the unavailable kind rejected as StoreUnavailableError (close excepted). */
export function withUnavailableErrors(store: AuthStore): AuthStore {
  return wrapMethods(store, (call) =>
    call().catch((err: unknown) => {
      throw isUnavailable(err) ? new StoreUnavailableError(err) : err;
    }),
  );
}
