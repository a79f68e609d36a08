/** Runs the real CLI (src/cli/main.ts under tsx) in a child process, from any working folder. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(REPO, 'src/cli/main.ts');

export interface CliOptions {
  cwd?: string;
  /** Added to the environment (which never carries the caller's VEXIL_* variables). */
  env?: Record<string, string>;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function spawnCli(args: readonly string[], opts: CliOptions = {}): ChildProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
  Object.assign(env, opts.env);
  return spawn(process.execPath, [`--import=${TSX}`, MAIN, ...args], {
    cwd: opts.cwd ?? REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function runCli(args: readonly string[], opts: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * Starts `vexil <args>` (a `serve`), killed at teardown if still running; resolves with the process,
 * its `listening` log line (`url`, `storage`, ...) and every JSON log line so far (the array keeps
 * growing while the process runs), or rejects with stderr when it exits first.
 */
export function serveCli(
  t: { teardown(fn: () => void): void },
  args: readonly string[],
  opts: CliOptions = {},
): Promise<{ child: ChildProcess; listening: Record<string, unknown>; logs: Array<Record<string, unknown>> }> {
  const child = spawnCli(args, opts);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const logs: Array<Record<string, unknown>> = [];
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // not a log line
      }
      logs.push(entry);
      if (entry.msg === 'listening') resolve({ child, listening: entry, logs });
    });
    child.on('close', (code) => reject(new Error(`vexil serve exited ${code}: ${stderr}`)));
  });
}
