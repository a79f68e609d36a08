import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import t, { type Test } from 'tap';
import { workerCount } from '../../src/server/workers.js';
import { loadConfig } from '../../src/config/load.js';
import { tempState } from '../store/temp-state.js';
import { REPO, runCli, spawnCli } from './run-cli.js';

type LogLine = Record<string, unknown>;

/** A config serving `statePath` with `workers` processes on a free loopback port, JSON logs. */
function configFor(dir: string, statePath: string, workers: number): string {
  const file = join(dir, 'vexil.yml');
  writeFileSync(
    file,
    `server:\n  host: 127.0.0.1\n  http_port: 0\n  workers: ${workers}\nlog:\n  level: info\n  encoding: json\n  requests: all\nstorage:\n  type: local\n  local:\n    path: ${JSON.stringify(statePath)}\n`,
  );
  return file;
}

interface Served {
  readonly child: ChildProcess;
  readonly logs: LogLine[];
  readonly exited: Promise<number | null>;
  /** Resolves with the first log line (already written or to come) matching `pred`. */
  waitFor(pred: (l: LogLine) => boolean): Promise<LogLine>;
}

function serve(t: Test, config: string): Served {
  return watch(t, spawnCli(['serve', '--config', config]));
}

const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
const PRIMARY_FIXTURE = fileURLToPath(new URL('./fixtures/cluster-primary.ts', import.meta.url));

/** runClusterPrimary in a child process, over stand-in workers behaving as `mode` says. */
function supervise(t: Test, mode: string, options: Record<string, number>): Served {
  const child = spawn(process.execPath, [`--import=${TSX}`, PRIMARY_FIXTURE, JSON.stringify(options)], {
    cwd: REPO,
    env: { ...process.env, CLUSTER_WORKER_MODE: mode },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watch(t, child);
}

/** Collects the JSON log lines of a child (and of the workers it forks). */
function watch(t: Test, child: ChildProcess): Served {
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const logs: LogLine[] = [];
  const waiters: Array<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: LogLine;
    try {
      entry = JSON.parse(line) as LogLine;
    } catch {
      return;
    }
    logs.push(entry);
    for (const w of [...waiters]) {
      if (w.pred(entry)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(entry);
      }
    }
  });
  const waitFor = (pred: (l: LogLine) => boolean) =>
    new Promise<LogLine>((resolve, reject) => {
      const seen = logs.find(pred);
      if (seen) return resolve(seen);
      waiters.push({ pred, resolve });
      void exited.then((code) => reject(new Error(`vexil exited ${code} first: ${stderr}`)));
    });
  return { child, logs, exited, waitFor };
}

const msg = (m: string) => (l: LogLine) => l.msg === m;

/** One evaluation on a fresh connection, so that the primary hands each to the next worker. */
function evaluateOnNewConnection(url: string): Promise<{ status: number; variantKey: string }> {
  const body = JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {} });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/evaluate/v1/variant`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, variantKey: (JSON.parse(text) as { variantKey: string }).variantKey }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('server.workers: 0 is one per core, other values are taken as given; negatives are refused', async (t) => {
  t.equal(workerCount(0), availableParallelism());
  t.equal(workerCount(1), 1);
  t.equal(workerCount(3), 3);
  const dir = tempState(t);
  t.equal(loadConfig({ env: {}, cwd: dir }).server.workers, 1, 'default: a single process');
  t.equal(loadConfig({ env: { VEXIL_SERVER_WORKERS: '4' }, cwd: dir }).server.workers, 4);
  t.throws(() => loadConfig({ env: { VEXIL_SERVER_WORKERS: '-1' }, cwd: dir }), /server\.workers: must be >= 0/);
});

t.test('workers: 2 serves from both workers on one port, logs `listening` once, exits 0 on SIGTERM', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'hello'), 2);
  const s = serve(t, config);
  const listening = await s.waitFor(msg('listening'));
  const url = String(listening.url);
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.not(url, 'http://127.0.0.1:0', 'the actual port');
  t.equal(listening.workers, 2);

  const workerLines = s.logs.filter(msg('worker listening'));
  t.equal(workerLines.length, 2, 'both workers logged that they listen');
  const workerPids = workerLines.map((l) => Number(l.pid));
  t.equal(new Set(workerPids).size, 2, 'two distinct worker processes');
  t.notOk(workerPids.includes(Number(listening.pid)), 'the primary is not a worker');
  t.same(
    workerLines.map((l) => l.url),
    [url, url],
    'port 0: every worker got the same ephemeral port',
  );

  for (let i = 0; i < 12; i++) {
    const r = await evaluateOnNewConnection(url);
    t.equal(r.status, 200);
    t.equal(r.variantKey, 'hello');
  }
  const requests = s.logs.filter(msg('request'));
  const servedBy = new Set(requests.map((l) => Number(l.pid)));
  t.same([...servedBy].sort(), [...workerPids].sort(), 'requests reached both workers, never the primary');

  s.child.kill('SIGTERM');
  t.equal(await s.exited, 0, 'exit 0 after SIGTERM');
  t.equal(s.logs.filter(msg('listening')).length, 1, '`listening` appeared exactly once');
  const stopped = s.logs.filter(msg('stopped')).map((l) => Number(l.pid));
  t.same(stopped.sort(), [...workerPids, Number(listening.pid)].sort(), 'each worker drained and stopped, then the primary');
  for (const pid of workerPids) t.notOk(alive(pid), `worker ${pid} is gone`);
  await t.rejects(fetch(`${url}/health`), 'no longer listening');
});

t.test('workers: 2 replaces a worker that dies, on the same port; SIGINT exits 0', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'hello'), 2);
  const s = serve(t, config);
  const listening = await s.waitFor(msg('listening'));
  const url = String(listening.url);
  const [victim, survivor] = s.logs.filter(msg('worker listening')).map((l) => Number(l.pid));

  process.kill(victim!, 'SIGKILL');
  const died = await s.waitFor(msg('worker died unexpectedly; restarting'));
  t.equal(died.workerPid, victim, 'the primary noticed which worker died');
  t.equal(died.signal, 'SIGKILL');
  t.type(died.restartInMs, 'number', 'the restart is delayed');
  const replacement = await s.waitFor((l) => l.msg === 'worker listening' && l.pid !== victim && l.pid !== survivor);
  t.equal(replacement.url, url, 'the replacement shares the same port');
  await s.waitFor(msg('replacement worker listening'));

  const servedBy = new Set<number>();
  const before = s.logs.length;
  for (let i = 0; i < 8; i++) t.equal((await evaluateOnNewConnection(url)).variantKey, 'hello');
  for (const l of s.logs.slice(before)) if (l.msg === 'request') servedBy.add(Number(l.pid));
  t.ok(servedBy.has(Number(replacement.pid)), 'the replacement serves requests');
  t.same([...servedBy].sort(), [survivor, Number(replacement.pid)].sort(), 'served by the survivor and the replacement only');

  s.child.kill('SIGINT');
  t.equal(await s.exited, 0, 'exit 0 after SIGINT');
  t.equal(s.logs.filter(msg('listening')).length, 1, '`listening` still appeared exactly once');
});

t.test('workers: 2 with an invalid state prints the located errors once and exits 1', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'broken'), 2);
  const r = await runCli(['serve', '--config', config]);
  t.equal(r.code, 1);
  const headers = r.stderr.match(/is invalid \(\d+ errors?, \d+ warnings?\); not starting/g) ?? [];
  t.equal(headers.length, 1, 'reported once, not once per worker');
  t.equal(r.stderr.match(/features\.yml:\d+:\d+: error /g)?.length ?? 0, 1, 'the problem is listed once');
  t.match(r.stderr, /features\.yml:\d+:\d+: error [a-z0-9.-]+: .*nobody-defined-this/);
  t.notMatch(r.stdout, /"msg":"listening"/);
  t.match(r.stdout, /"msg":"worker failed to start; stopping"/);
});

t.test('supervisor: restarts with a doubling delay, then gives up after too many deaths in a minute', async (t) => {
  const s = supervise(t, 'die-soon', { workers: 2, restartDelayMs: 1, maxRestartsPerMinute: 3 });
  t.equal(await s.exited, 1, 'exit 1 when workers keep dying');
  const restarts = s.logs.filter(msg('worker died unexpectedly; restarting'));
  t.same(
    restarts.map((l) => l.restartInMs),
    [1, 2, 4],
    'three restarts, each waiting twice as long',
  );
  t.same(
    restarts.map((l) => l.code),
    [3, 3, 3],
    'the exit status of the dead worker is logged',
  );
  const gaveUp = s.logs.filter(msg('workers keep dying; giving up'));
  t.equal(gaveUp.length, 1);
  t.equal(gaveUp[0]?.restartsLastMinute, 3);
});

t.test('supervisor: a worker failing before it listens stops the start; the others are never forked', async (t) => {
  const s = supervise(t, 'fail-at-start', { workers: 3 });
  t.equal(await s.exited, 1);
  t.equal(s.logs.filter(msg('stand-in worker failing at start')).length, 1, 'only the first worker was forked');
  t.equal(s.logs.filter(msg('worker failed to start; stopping')).length, 1);
  t.equal(s.logs.filter(msg('worker died unexpectedly; restarting')).length, 0, 'a startup failure is not retried');
  t.equal(s.logs.filter(msg('listening')).length, 0);
});

t.test('supervisor: workers that ignore SIGTERM are killed after the shutdown timeout, exit 1', async (t) => {
  const s = supervise(t, 'ignore-sigterm', { workers: 2, shutdownTimeoutMs: 300 });
  const listening = await s.waitFor(msg('listening'));
  t.equal(listening.workers, 2);
  const workerPids = s.logs.filter(msg('worker listening')).map((l) => Number(l.pid));
  s.child.kill('SIGTERM');
  t.equal(await s.exited, 1, 'exit 1: the shutdown was not clean');
  const killed = s.logs.find(msg('workers did not stop in time; killing them'));
  t.same((killed?.workerPids as number[] | undefined)?.slice().sort(), workerPids.sort(), 'both stragglers named');
  for (const pid of workerPids) {
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    t.notOk(alive(pid), `worker ${pid} was killed`);
  }
});
