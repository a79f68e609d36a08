// throwaway-db.mjs — start a private Redis or PostgreSQL server for tests on 127.0.0.1:<free port>
// with its data in a fresh temp dir; no systemd, no /etc config touched. Dependency-free Node ESM.
// Needs Debian packages: redis-server (apt-get install -y redis-server) / postgresql (15 on bookworm).
//
// API:  import { startRedis, startPostgres, freePort } from './throwaway-db.mjs'
//       const r = await startRedis();     // { url: 'redis://127.0.0.1:P', port, pid, dir, close }
//       const pg = await startPostgres(); // { url: 'postgres://postgres@127.0.0.1:P/postgres', port, pid, dir, close }
//       await r.close(); await pg.close(); // stops by PID (SIGTERM / pg_ctl stop -m fast), rm -rf dir
// CLI:  node throwaway-db.mjs redis|postgres   -> prints one JSON line, stays in the foreground; SIGTERM/Ctrl-C stops + cleans.
// Notes: PostgreSQL refuses to run as root, so as root initdb/pg_ctl run via `runuser -u postgres`
// and the temp dir is chowned to postgres. Auth is `trust` on loopback (tests only!).
// Env PG_BIN overrides /usr/lib/postgresql/<highest>/bin.
//
// vexil's copy (test/support/throwaway-db.ts), adapted from shared/tools/throwaway-db.mjs: typed,
// stop()/start() and pause()/resume() (SIGSTOP) for outage tests, Redis with stop()/start() on the
// same port, no CLI, and `postgresUnavailableReason()` / `redisUnavailableReason()` so tests can
// say why they skip. Import from '../support/throwaway-db.js'.
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface ThrowawayPostgres {
  /** postgres://postgres@127.0.0.1:PORT/DATABASE (trust auth on loopback). */
  url: string;
  port: number;
  pid: number;
  dir: string;
  close(): Promise<void>;
  /** `pg_ctl stop -m fast` (the data stays; `start()` brings it back on the same port). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT to the postmaster and every backend: connections stay open, nothing answers. */
  pause(): void;
  resume(): void;
}

/** The postmaster and its children (backends, background workers), from /proc. */
function processTree(root: number): number[] {
  const pids = [root];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after the last ')'.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === root) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net
      .createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Signals every process of the server's tree. A backend listed a moment ago may have exited since
 * (PostgreSQL starts and ends backends all the time): that one is skipped, not an error.
 */
function signalTree(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const p of pids) {
    try {
      process.kill(p, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}

async function waitExit(pid: number, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (alive(pid) && Date.now() < end) await sleep(50);
  if (alive(pid)) signalTree([pid], 'SIGKILL');
}

function pgBinDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const v = fs
    .readdirSync(base)
    .filter((d) => /^\d+$/.test(d))
    .sort((a, b) => Number(b) - Number(a))[0];
  return v ? path.join(base, v, 'bin') : undefined;
}

const asRoot = () => process.getuid?.() === 0;

/** Why a throwaway PostgreSQL cannot be started here, or undefined when it can. */
export function postgresUnavailableReason(): string | undefined {
  const bin = pgBinDir();
  if (!bin || !fs.existsSync(path.join(bin, 'initdb'))) {
    return 'PostgreSQL server binaries not found under /usr/lib/postgresql (Debian package `postgresql`; scripts/test-setup.sh installs it when run as root)';
  }
  if (asRoot() && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return 'running as root but there is no `postgres` user to run initdb as';
  }
  return undefined;
}

export async function startPostgres({ database }: { database?: string } = {}): Promise<ThrowawayPostgres> {
  const bin = pgBinDir();
  if (!bin) throw new Error('no PostgreSQL under /usr/lib/postgresql (apt-get install -y postgresql)');
  const root = asRoot();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-'));
  if (root) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (cmd: string, args: string[]) =>
    execFileSync(root ? 'runuser' : cmd, root ? ['-u', 'postgres', '--', cmd, ...args] : args, { stdio: 'pipe' });
  // Async, so the clients in this process see their sockets close while it runs.
  const runAsync = (cmd: string, args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(root ? 'runuser' : cmd, root ? ['-u', 'postgres', '--', cmd, ...args] : args, (err) => (err ? reject(err) : resolve())),
    );
  const data = path.join(dir, 'data');
  run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  const startArgs = [
    '-D',
    data,
    '-l',
    path.join(dir, 'pg.log'),
    '-w',
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
    'start',
  ];
  run(path.join(bin, 'pg_ctl'), startArgs);
  const readPid = () => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let pid = readPid();
  if (database) run(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database || 'postgres'}`,
    port,
    pid,
    dir,
    async stop() {
      await runAsync(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async start() {
      await runAsync(path.join(bin, 'pg_ctl'), startArgs);
      pid = readPid();
    },
    pause() {
      signalTree(processTree(pid), 'SIGSTOP');
    },
    resume() {
      signalTree(processTree(pid), 'SIGCONT');
    },
    async close() {
      if (alive(pid)) signalTree(processTree(pid), 'SIGCONT');
      try {
        run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        if (alive(pid)) signalTree([pid], 'SIGQUIT');
      }
      await waitExit(pid);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ThrowawayRedis {
  /** redis://127.0.0.1:PORT (no password; loopback only). */
  url: string;
  port: number;
  dir: string;
  /** Stops the server (SIGTERM, no save: its keys are lost, as after a crash without persistence). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Why a throwaway Redis cannot be started here, or undefined when it can. */
export function redisUnavailableReason(): string | undefined {
  const r = spawnSync('redis-server', ['--version']);
  if (r.error !== undefined || r.status !== 0) {
    return 'redis-server not found (Debian package `redis-server`; scripts/test-setup.sh installs it when run as root)';
  }
  return undefined;
}

async function waitPort(port: number, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listening on 127.0.0.1:${port} after ${ms} ms`);
}

export async function startRedis(): Promise<ThrowawayRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', path.join(dir, 'redis.log')],
      { stdio: 'ignore' },
    );
    await waitPort(port);
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c?.pid === undefined || !alive(c.pid)) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    stop,
    start,
    async close() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
