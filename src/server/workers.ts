/**
 * `server.workers` > 1: a primary process that forks the workers (node:cluster) and supervises
 * them, and the few hooks a worker's `vexil serve` needs to take part.
 *
 * - The primary never loads the state nor serves HTTP. It forks one worker first and the others
 *   only once that one is listening, so a startup failure (invalid state, port in use) is
 *   reported once, by one worker, and the primary exits 1.
 * - Workers share one listening handle owned by the primary (round-robin hand-off of
 *   connections), so `http_port: 0` gives every worker the same ephemeral port.
 * - Each worker logs `worker listening`; the primary logs the usual `listening` line once, when
 *   all of them are listening.
 * - A worker that dies afterwards is replaced after a backoff; too many deaths within a minute
 *   and the primary gives up (stops the rest, exit 1) so that the supervisor above it restarts
 *   the whole server instead of it limping along.
 * - SIGTERM/SIGINT: forwarded as SIGTERM; each worker drains as a single process does; exit 0
 *   once all have exited cleanly, stragglers are killed after a timeout (exit 1).
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '../logger.js';

/** The number of serving processes `server.workers` asks for: 0 means one per core. */
export function workerCount(configured: number): number {
  return configured === 0 ? availableParallelism() : configured;
}

/** True when this process should supervise workers instead of serving. */
export function shouldRunClusterPrimary(workers: number): boolean {
  return workers > 1 && cluster.isPrimary;
}

/** Fields of the `listening` log line; the URL is what tests and operators read. */
export interface ListeningFields {
  readonly url: string;
  readonly [field: string]: unknown;
}

const LISTENING_MESSAGE = 'vexil:listening';

interface ListeningMessage {
  type: typeof LISTENING_MESSAGE;
  fields: ListeningFields;
}

function isListeningMessage(m: unknown): m is ListeningMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === LISTENING_MESSAGE;
}

/**
 * Logs that the HTTP server listens. In a worker the line is `worker listening` (its pid is on
 * every line) and the primary is told, so that `listening` appears once for the whole server.
 */
export function announceListening(logger: Logger, fields: ListeningFields): void {
  if (!cluster.isWorker) {
    logger.info(fields, 'listening');
    return;
  }
  logger.info({ ...fields, worker: cluster.worker?.id }, 'worker listening');
  process.send?.({ type: LISTENING_MESSAGE, fields } satisfies ListeningMessage);
}

/**
 * The signals that start a graceful shutdown in this process. A worker only obeys the primary's
 * SIGTERM: a terminal's Ctrl-C reaches the whole process group, and a worker that took it as a
 * second signal would skip draining. So a worker ignores SIGINT once this is called.
 */
export function shutdownSignals(): NodeJS.Signals[] {
  if (!cluster.isWorker) return ['SIGTERM', 'SIGINT'];
  process.on('SIGINT', () => {});
  return ['SIGTERM'];
}

export interface ClusterPrimaryOptions {
  /** How many workers to keep running (> 1). */
  readonly workers: number;
  readonly logger: Logger;
  /** First restart delay; doubles with each restart of the last minute (default 100 ms). */
  readonly restartDelayMs?: number;
  /** Longest restart delay (default 10 s). */
  readonly maxRestartDelayMs?: number;
  /** More restarts than this within a minute and the primary gives up (default 10). */
  readonly maxRestartsPerMinute?: number;
  /** After a shutdown signal, workers still running this long are killed (default 20 s). */
  readonly shutdownTimeoutMs?: number;
}

/** The longest a worker's own shutdown takes (serve.ts's last resort is 15 s), plus a margin. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 20_000;
const MINUTE_MS = 60_000;
const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * Environment variable telling a worker its slot (0..workers-1). A worker that replaces a dead one
 * gets the same slot, so per-worker resources on disk (the git mirror) are reused, not multiplied.
 */
export const WORKER_SLOT_ENV = 'VEXIL_WORKER_SLOT';

/** This process's worker slot, or undefined outside a cluster worker. */
export function workerSlot(env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (!cluster.isWorker) return undefined;
  const n = Number(env[WORKER_SLOT_ENV]);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

interface WorkerState {
  readonly worker: Worker;
  readonly pid: number | undefined;
  /** Stable 0-based position, kept by a replacement worker (see WORKER_SLOT_ENV). */
  readonly slot: number;
  listening: boolean;
}

/**
 * Forks and supervises the workers until a shutdown signal or a fatal failure; resolves with the
 * exit status (0 after a clean shutdown, 1 otherwise).
 */
export function runClusterPrimary(opts: ClusterPrimaryOptions): Promise<number> {
  const { workers: size, logger } = opts;
  const restartDelayMs = opts.restartDelayMs ?? 100;
  const maxRestartDelayMs = opts.maxRestartDelayMs ?? 10_000;
  const maxRestartsPerMinute = opts.maxRestartsPerMinute ?? 10;
  const shutdownTimeoutMs = opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;

  return new Promise<number>((resolveExit) => {
    const live = new Map<Worker, WorkerState>();
    const restartTimers = new Set<NodeJS.Timeout>();
    const restartTimes: number[] = [];
    let phase: 'starting' | 'running' | 'stopping' = 'starting';
    let announced: ListeningFields | undefined;
    let exitCode = 0;
    let killTimer: NodeJS.Timeout | undefined;
    let finished = false;
    let forkedRest = false;

    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      if (killTimer) clearTimeout(killTimer);
      for (const s of SIGNALS) process.off(s, onSignal);
      if (code === 0) logger.info({}, 'stopped');
      resolveExit(code);
    };

    const listeningCount = () => [...live.values()].filter((s) => s.listening).length;

    const fork = (slot: number) => {
      const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
      const state: WorkerState = { worker, pid: worker.process.pid, slot, listening: false };
      live.set(worker, state);
      worker.on('message', (m: unknown) => {
        if (isListeningMessage(m)) onListening(state, m.fields);
      });
      worker.on('exit', (code: number | null, signal: NodeJS.Signals | null) => onExit(state, code, signal));
      // A failed IPC send or kill; the exit event (if any) drives what happens next.
      worker.on('error', (err: Error) => logger.warn({ workerPid: state.pid, err }, 'worker error'));
    };

    const onListening = (state: WorkerState, fields: ListeningFields) => {
      state.listening = true;
      if (phase === 'stopping') return;
      if (announced !== undefined) {
        logger.info({ workerPid: state.pid, workers: listeningCount() }, 'replacement worker listening');
        if (fields.url !== announced.url) {
          logger.warn({ workerPid: state.pid, url: fields.url, announced: announced.url }, 'replacement worker listens on a different URL');
        }
        return;
      }
      // The first worker proved that the state loads and the port binds; the rest can start.
      if (!forkedRest) {
        forkedRest = true;
        for (let i = 1; i < size; i++) fork(i);
      }
      if (listeningCount() === size) {
        phase = 'running';
        announced = fields;
        logger.info({ ...fields, workers: size }, 'listening');
      }
    };

    const onExit = (state: WorkerState, code: number | null, signal: NodeJS.Signals | null) => {
      live.delete(state.worker);
      if (phase === 'stopping') {
        // A worker still loading has no handler yet, so our SIGTERM ends it by default: fine.
        const clean = code === 0 || signal === 'SIGTERM' || signal === 'SIGINT';
        if (!clean) {
          exitCode = 1;
          logger.warn({ workerPid: state.pid, code, signal }, 'worker did not stop cleanly');
        }
        if (live.size === 0) finish(exitCode);
        return;
      }
      if (announced === undefined && !state.listening) {
        // The worker has already printed why (located state problems, a port in use...).
        logger.error({ workerPid: state.pid, code, signal }, 'worker failed to start; stopping');
        stop(1);
        return;
      }
      const now = Date.now();
      while (restartTimes.length > 0 && now - restartTimes[0]! >= MINUTE_MS) restartTimes.shift();
      if (restartTimes.length >= maxRestartsPerMinute) {
        logger.error(
          { workerPid: state.pid, code, signal, restartsLastMinute: restartTimes.length },
          'workers keep dying; giving up',
        );
        stop(1);
        return;
      }
      const delayMs = Math.min(restartDelayMs * 2 ** restartTimes.length, maxRestartDelayMs);
      restartTimes.push(now);
      logger.warn(
        { workerPid: state.pid, code, signal, restartInMs: delayMs, restartsLastMinute: restartTimes.length },
        'worker died unexpectedly; restarting',
      );
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (phase !== 'stopping') fork(state.slot);
      }, delayMs);
      restartTimers.add(timer);
    };

    const stop = (code: number) => {
      phase = 'stopping';
      exitCode = Math.max(exitCode, code);
      for (const t of restartTimers) clearTimeout(t);
      restartTimers.clear();
      if (live.size === 0) {
        finish(exitCode);
        return;
      }
      for (const s of live.values()) s.worker.process.kill('SIGTERM');
      killTimer = setTimeout(() => {
        logger.warn({ timeoutMs: shutdownTimeoutMs, workerPids: [...live.values()].map((s) => s.pid) }, 'workers did not stop in time; killing them');
        for (const s of live.values()) s.worker.process.kill('SIGKILL');
        finish(1);
      }, shutdownTimeoutMs);
      killTimer.unref();
    };

    const onSignal = (signal: NodeJS.Signals) => {
      if (phase === 'stopping') {
        logger.warn({ signal }, 'second signal: killing workers without draining');
        for (const s of live.values()) s.worker.process.kill('SIGKILL');
        finish(1);
        return;
      }
      logger.info({ signal, workers: live.size }, 'shutting down: workers stop watching and drain in-flight requests');
      stop(0);
    };

    for (const s of SIGNALS) process.on(s, onSignal);
    logger.info({ workers: size }, 'starting workers');
    fork(0);
  });
}
