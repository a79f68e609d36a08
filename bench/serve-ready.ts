/**
 * Process start to ready, as an operator sees it: `vexil serve` from the compiled build on a folder
 * of generated state (local storage), timed from the spawn until `GET /ready` first answers 200.
 * Part of `npm run bench -- load`. Besides wall time (noisy on a shared machine) it reads the
 * child's own CPU time (utime + stime, /proc/<pid>/stat) and peak RSS (VmHWM, /proc/<pid>/status)
 * at that moment, then again once the process has gone quiet: after a snapshot is swapped in the
 * store generates every flag's matcher in the background (store/matcher-warmup.ts), so ready and
 * settled differ by that work. Linux only (/proc); elsewhere the CPU and RSS fields are absent.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { sleep, stop } from './http-harness.js';

export interface ServeReadyLine {
  flags: number;
  /** Spawn to the first 200 of /ready (wall clock). */
  readyMs: number;
  /** The child's CPU time and peak RSS when /ready first answered 200. */
  readyCpuMs?: number;
  readyRssMiB?: number;
  /** The same once the process went quiet (background matcher generation done). */
  settledCpuMs?: number;
  settledRssMiB?: number;
}

/** CPU time (ms) and peak RSS (MiB) of a process, from /proc; undefined where /proc is missing. */
function procFigures(pid: number): { cpuMs: number; rssMiB: number } | undefined {
  try {
    // Fields after the command name: state is index 0, utime 11, stime 12 (clock ticks, 100 per second on Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuMs = (Number(fields[11]) + Number(fields[12])) * 10;
    const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuMs, rssMiB: Number(hwm?.[1] ?? 0) / 1024 };
  } catch {
    return undefined;
  }
}

export async function measureServeReady(build: BenchBuild, stateDir: string, flags: number): Promise<ServeReadyLine> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-ready-'));
  try {
    writeFileSync(
      join(dir, 'config.yml'),
      ['server:', '  host: 127.0.0.1', '  http_port: 0', '  workers: 1', 'log:', '  level: info', '  encoding: json', 'storage:', '  type: local', '  local:', `    path: ${JSON.stringify(stateDir)}`, ''].join('\n'),
    );
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
    env.NODE_OPTIONS = '';
    const t0 = performance.now();
    const child = spawn(process.execPath, [join(build.root, 'src/cli/main.js'), 'serve', '--config', join(dir, 'config.yml')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      let url: string | undefined;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`vexil serve exited (${child.exitCode}): ${out.slice(0, 2000)}`);
        if (performance.now() - t0 > 120_000) throw new Error('vexil serve was not ready within 120 s');
        url ??= /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1];
        if (url !== undefined) {
          const ok = await fetch(`${url}/ready`).then(
            async (r) => (await r.arrayBuffer(), r.status === 200),
            () => false,
          );
          if (ok) break;
        }
        await sleep(5);
      }
      const line: ServeReadyLine = { flags, readyMs: performance.now() - t0 };
      const atReady = procFigures(child.pid!);
      if (atReady !== undefined) {
        line.readyCpuMs = atReady.cpuMs;
        line.readyRssMiB = atReady.rssMiB;
        // Quiet: less than 20 ms of CPU over the last second (at most 60 s).
        let last = atReady;
        for (let waited = 0; waited < 60_000; waited += 1000) {
          await sleep(1000);
          const now = procFigures(child.pid!);
          if (now === undefined) break;
          const quiet = now.cpuMs - last.cpuMs < 20;
          last = now;
          if (quiet) break;
        }
        line.settledCpuMs = last.cpuMs;
        line.settledRssMiB = last.rssMiB;
      }
      return line;
    } finally {
      await stop(child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
