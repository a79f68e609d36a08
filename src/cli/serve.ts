/**
 * `vexil serve [--config FILE]`: config → logger → source → store (first build) → HTTP server;
 * SIGTERM/SIGINT → stop accepting connections, drain requests and end streams, abandon backend
 * work (requests to a Git server in flight), exit 0. Invalid config or invalid
 * initial state → the problems on stderr, exit 1.
 */
import cluster from 'node:cluster';
import { dirname, relative, resolve, sep } from 'node:path';
import { parseCommandArgs } from './command-args.js';
import { AuthSetupError, startAuthentication } from '../auth/setup.js';
import { ConfigError } from '../config/errors.js';
import { loadConfigReport, type ConfigReport } from '../config/load.js';
import { createLogger } from '../logger.js';
import {
  announceListening,
  runClusterPrimary,
  shouldRunClusterPrimary,
  shutdownSignals,
  WORKER_SLOT_ENV,
  workerCount,
  workerSlot,
} from '../server/workers.js';
import { startHttpServer } from '../server/listen.js';
import { startTracing } from '../server/tracing.js';
import { tracedSource } from '../sources/traced-source.js';
import { readWebhookSecrets, type WebhookSecrets } from '../server/hooks/secrets.js';
import { storageFromConfig } from '../sources/from-config.js';
import type { Storage } from '../sources/storage.js';
import { InvalidStateError } from '../store/invalid-state-error.js';
import { createSnapshotStore } from '../store/snapshot-store.js';
import { openHistoryFromConfig, type OpenedHistory } from '../store/history/from-config.js';
import { createHistoryRecorder } from '../store/history/recorder.js';
import { openNotificationQueue, sinksFromConfig } from '../store/notifications/from-config.js';
import { startNotifier, type Notifier } from '../store/notifications/notifier.js';
import type { NotificationQueueStore } from '../store/notifications/types.js';
import { createAuditRecorder } from '../store/history/audit-recorder.js';
import { coordinatedStore } from '../store/coordination/coordinated-store.js';
import { createCoordinator } from '../store/coordination/coordinator.js';
import { coordinationFromConfig } from '../store/coordination/engine-from-config.js';
import type { SnapshotStore } from '../store/types.js';
import { VERSION } from '../version.js';
import { countSummary, formatText, type SourceLines } from './format-problems.js';
import type { ExcerptedProblem } from '../state/excerpt.js';
import type { CliIO } from './io.js';
import { SERVE_USAGE, UsageError } from './usage.js';

/**
 * Last resort after a shutdown signal. The HTTP server cuts requests still running after its own
 * 10 s drain and the store abandons backend work; this only covers a shutdown step that hangs.
 */
const SHUTDOWN_TIMEOUT_MS = 15_000;

export async function runServe(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs(
    {
      args: [...args],
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
      strict: true,
    },
    SERVE_USAGE,
  );
  if (parsed.values.help) {
    io.stdout(SERVE_USAGE);
    return 0;
  }

  let report: ConfigReport;
  try {
    report = loadConfigReport({
      ...(parsed.values.config !== undefined ? { file: parsed.values.config } : {}),
      cwd: io.cwd,
      ignoreEnv: [WORKER_SLOT_ENV],
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(`vexil: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const { config } = report;
  const logger = createLogger(config.log);
  // Once per start: cluster workers load the same environment again and stay quiet about it.
  if (!cluster.isWorker) {
    for (const { variable, didYouMean } of report.ignoredVariables) {
      logger.debug({ variable, ...(didYouMean !== undefined ? { didYouMean } : {}) }, 'environment variable ignored: it names no config key');
    }
  }
  const workers = workerCount(config.server.workers);
  // The primary of a cluster only supervises; each worker runs the rest of this function.
  if (shouldRunClusterPrimary(workers)) return runClusterPrimary({ workers, logger });
  let webhookSecrets: WebhookSecrets;
  try {
    webhookSecrets = readWebhookSecrets(config.webhooks);
  } catch (err) {
    io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const configFile = parsed.values.config;
  let storage: Storage;
  try {
    const slot = workerSlot();
    storage = storageFromConfig(config, {
      baseDir: configFile !== undefined ? dirname(resolve(io.cwd, configFile)) : io.cwd,
      cwd: io.cwd,
      ...(slot === undefined ? {} : { workerSlot: slot }),
      logger: logger.child({ component: 'source' }),
    });
  } catch (err) {
    io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  // tracing.*: off, nothing is loaded; on, the SDK is up before the first build so it is traced.
  let tracing;
  try {
    tracing = await startTracing({ config: config.tracing, logger: logger.child({ component: 'tracing' }) });
  } catch (err) {
    await storage.source.close?.();
    io.stderr(`vexil: tracing: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const { store: storeOptions } = storage;
  const source = tracing !== undefined ? tracedSource(storage.source) : storage.source;
  const statePath = storage.description;
  // The served-revision history: opened before the first build, which it records.
  let opened: OpenedHistory;
  try {
    const slot = workerSlot();
    opened = await openHistoryFromConfig(config, { cwd: io.cwd, ...(slot === undefined ? {} : { workerSlot: slot }) });
  } catch (err) {
    await source.close?.();
    io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const history = opened;
  logger.info({ store: history.store.kind, location: history.location, scope: history.scope }, 'history store opened');
  const recorder = createHistoryRecorder({ store: history.store, scope: history.scope, retention: history.retention, logger: logger.child({ component: 'history' }) });
  // notifications.sinks: off (nothing opened) while none is listed; events come from the history.
  let notifications: { queue: NotificationQueueStore; notifier: Notifier } | undefined;
  // The store the notifier builds past revisions with (set once it exists, below).
  let builtStore: SnapshotStore | undefined;
  try {
    const sinks = sinksFromConfig(config);
    if (sinks.length > 0) {
      const queue = await openNotificationQueue(config, io.cwd);
      const notifier = startNotifier({
        sinks,
        queue,
        scope: history.scope,
        ...(config.server.public_url !== undefined ? { publicUrl: config.server.public_url } : {}),
        logger: logger.child({ component: 'notifications' }),
        userAgent: `vexil/${VERSION}`,
        // After a restart the revision served before is built by its id to diff against.
        snapshotOf: (revision) => {
          if (builtStore === undefined) return Promise.reject(new Error('the store is not started'));
          return builtStore.resolve(revision);
        },
      });
      // server.workers without coordination: every worker records the swap in its own history;
      // the first one alone announces it (all of them deliver from the shared queue).
      const slot = workerSlot();
      if (config.cluster.coordination.type !== 'none' || slot === undefined || slot === 0) recorder.onRecorded((e) => notifier.revision(e));
      notifications = { queue, notifier };
      logger.info({ sinks: sinks.map((s) => ({ type: s.type, origin: s.shownUrl })), store: queue.kind }, 'notifications on');
    }
  } catch (err) {
    await history.store.close();
    await source.close?.();
    io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const stopNotifications = async () => {
    await notifications?.notifier.stop();
    await notifications?.queue.close();
  };
  const managed = createSnapshotStore({
    source,
    logger: logger.child({ component: 'store' }),
    maxFileSize: config.storage.max_file_size,
    maxStateSize: config.storage.max_state_size,
    referenceRemoval: { listings: config.storage.reference_removal.listings, graceMs: config.storage.reference_removal.grace },
    history: recorder,
    ...storeOptions,
  });

  builtStore = managed;
  try {
    await managed.start();
  } catch (err) {
    await stopNotifications();
    await history.store.close();
    if (err instanceof InvalidStateError) {
      const shown = config.storage.type === 'local' ? displayBase(io.cwd, statePath) : statePath;
      const problems = err.problems.map((p) => ({ ...p, file: p.file === '' ? shown : joinDisplay(shown, p.file) }));
      io.stderr(`vexil: the state in ${shown} is invalid (${countSummary(err.problems)}); not starting\n`);
      io.stderr(formatText(problems, excerptLines(problems)));
      logger.error({ reference: err.reference, revision: err.revision }, 'initial state invalid');
      return 1;
    }
    io.stderr(`vexil: cannot load the state in ${statePath}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }

  // cluster.coordination: lead or follow the other replicas (and workers) through the engine.
  let served: SnapshotStore = managed;
  const coordination = coordinationFromConfig(config.cluster.coordination, storeOptions.pollIntervalMs);
  if (coordination !== undefined) {
    const coordinator = createCoordinator({
      store: managed,
      logger: logger.child({ component: 'coordination' }),
      ...coordination,
    });
    // Never fails: an engine out of reach means polling on our own until it answers.
    await coordinator.start();
    // A follower builds what the leader published (and recorded): it records nothing itself.
    recorder.followsWith(() => coordinator.status().role === 'follower');
    served = coordinatedStore(managed, coordinator);
  }
  const store = served;

  // Audit events kept beside the served history, every replica its own (history/audit-recorder.ts).
  const auditRecorder = createAuditRecorder({ store: history.store, scope: history.auditScope, retention: history.retention, logger: logger.child({ component: 'history' }) });
  let auth;
  try {
    // Listeners given here see the bootstrap token's event too (recorded while authentication starts).
    const auditListeners = [auditRecorder.record];
    if (notifications !== undefined) {
      const { notifier } = notifications;
      auditListeners.push((e) => void notifier.audit(e).catch((err: unknown) => logger.error({ err: err instanceof Error ? err.message : String(err) }, 'queueing an audit notification failed')));
    }
    auth = await startAuthentication({ config, logger: logger.child({ component: 'auth' }), cwd: io.cwd, auditListeners });
  } catch (err) {
    await store.close();
    await stopNotifications();
    await history.store.close();
    io.stderr(`vexil: ${err instanceof AuthSetupError ? err.message : String(err)}\n`);
    return 1;
  }
  const authRuntime = auth;

  let server;
  try {
    server = await startHttpServer({
      store,
      config,
      logger,
      storageType: config.storage.type,
      version: VERSION,
      authGate: authRuntime.gate,
      auth: authRuntime.routes,
      webhookSecrets,
      history: { history: history.store, scope: history.scope, auditScope: history.auditScope },
      ...(notifications !== undefined ? { notifier: notifications.notifier } : {}),
      ...(tracing !== undefined ? { tracing } : {}),
    });
  } catch (err) {
    await store.close();
    await stopNotifications();
    await history.store.close();
    await authRuntime.close();
    io.stderr(`vexil: cannot listen on ${config.server.host}:${config.server.http_port}: ${(err as Error).message}\n`);
    return 1;
  }
  announceListening(logger, { url: server.url, storage: config.storage.type, path: statePath, version: VERSION });

  const running = server;
  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting without draining');
        resolveExit(1);
        return;
      }
      stopping = true;
      logger.info({ signal }, 'shutting down: stop accepting, drain requests and streams, then abandon backend work');
      const timer = setTimeout(() => {
        logger.warn({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'shutdown did not finish in time; exiting');
        resolveExit(1);
      }, SHUTDOWN_TIMEOUT_MS);
      timer.unref();
      (async () => {
        // In this order: requests in flight are answered from the snapshots held in memory, so
        // they never wait on the backend; the backend (a Git server that may hang) is left last
        // and abandoned rather than awaited.
        await running.close();
        await store.close();
        logger.info({}, 'backend work abandoned');
        // After authentication, whose last cleanup pass may still record expiries.
        await authRuntime.close();
        await auditRecorder.settled();
        await stopNotifications();
        await history.store.close();
        await tracing?.shutdown();
        clearTimeout(timer);
        logger.info({}, 'stopped');
        resolveExit(0);
      })().catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        resolveExit(1);
      });
    };
    for (const signal of shutdownSignals()) process.on(signal, shutdown);
  });
}

/** The state folder as the user would type it: relative when under the working folder. */
function displayBase(cwd: string, statePath: string): string {
  const rel = relative(cwd, resolve(cwd, statePath));
  if (rel === '') return '.';
  return rel.startsWith('..') ? statePath : rel.split(sep).join('/');
}

function joinDisplay(base: string, file: string): string {
  return base === '.' ? file : `${base.split(sep).join('/')}/${file}`;
}

/**
 * The offending lines the store quoted with each problem (the files are not read again), in the
 * shape formatText takes. A line shown as a window around a far column is left out: its caret
 * would not line up.
 */
function excerptLines(problems: readonly ExcerptedProblem[]): SourceLines {
  const byFile = new Map<string, string[]>();
  for (const p of problems) {
    const ex = p.excerpt;
    if (ex === undefined || ex.firstColumn !== undefined) continue;
    const lines = byFile.get(p.file) ?? [];
    ex.lines.forEach((text, i) => (lines[ex.startLine - 1 + i] = text));
    byFile.set(p.file, lines);
  }
  return (file) => byFile.get(file);
}
