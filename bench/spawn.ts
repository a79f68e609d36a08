/**
 * Runs one compiled worker (bench/workers/*.js) in a fresh `node` process, with no loader hooks,
 * and collects the JSON lines it prints on stdout. A fresh process per measurement keeps JIT state,
 * heap size and peak RSS of one engine or scenario from leaking into the next.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface WorkerOptions {
  /** Extra node flags (e.g. --expose-gc). */
  readonly nodeFlags?: readonly string[];
  /** Kill the worker after this long (default 10 min). */
  readonly timeoutMs?: number;
}

/** Harmless noise that would clutter the report (flipt-client-js prints it on every init). */
const QUIET = /deprecated parameters for the initialization function/i;

export function runWorker<T>(buildRoot: string, worker: string, args: unknown, opts: WorkerOptions = {}): Promise<T[]> {
  const file = join(buildRoot, 'bench/workers', `${worker}.js`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), file, JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = err
        .split('\n')
        .filter((l) => l.trim() !== '' && !QUIET.test(l))
        .join('\n');
      if (code !== 0) {
        reject(new Error(`worker ${worker} failed (${signal ?? `exit ${code}`}):\n${stderr || out}`));
        return;
      }
      if (stderr) process.stderr.write(`[${worker}] ${stderr}\n`);
      try {
        resolve(
          out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as T),
        );
      } catch (e) {
        reject(new Error(`worker ${worker} printed invalid JSON: ${(e as Error).message}\n${out}`));
      }
    });
  });
}
