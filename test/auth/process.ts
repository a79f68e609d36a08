/**
 * Real `vexil serve` processes for the auth tests (`node --import tsx src/cli/main.ts serve
 * --config FILE`, through test/cli/run-cli.ts): the config written to a folder, stdout (JSON log
 * lines) and stderr captured, the URL read from the `listening` line.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { spawnCli } from '../cli/run-cli.js';
import { FIXTURES } from '../server/support.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface ServeProcess {
  readonly url: string;
  readonly pid: number;
  /** Every stdout line so far (JSON log lines), and stderr. */
  readonly lines: string[];
  stderr(): string;
  entries(): Array<Record<string, unknown>>;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when a log line satisfies `match` (rejects after `timeoutMs`). */
  waitForLog(match: (e: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** Writes `<dir>/vexil.yml` (state copied from the `api` fixture once) and returns its path. */
export function writeServeConfig(dir: string, yaml: string, name = 'vexil.yml'): string {
  const state = join(dir, 'state');
  cpSync(join(FIXTURES, 'api'), state, { recursive: true, force: false, errorOnExist: false });
  const file = join(dir, name);
  writeFileSync(
    file,
    `server:\n  host: 127.0.0.1\n  http_port: 0\nlog:\n  level: debug\n  encoding: json\nstorage:\n  local:\n    path: ${JSON.stringify(state)}\n${yaml}`,
  );
  return file;
}

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

export async function startServe(t: Teardown, configFile: string, cwd: string): Promise<ServeProcess> {
  const child = spawnCli(['serve', '--config', configFile], { cwd });
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters) w();
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited.then(() => undefined);
  });

  const entries = () => lines.map(parse).filter((e): e is Record<string, unknown> => e !== undefined);
  const waitForLog = (match: (e: Record<string, unknown>) => boolean, timeoutMs = 30_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const hit = entries().find(match);
        if (hit) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${stderr}\nstdout:\n${lines.join('\n')}`));
      }, timeoutMs);
      void exited.then((code) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        clearTimeout(timer);
        reject(new Error(`vexil exited (${code}) first; stderr: ${stderr}\nstdout:\n${lines.join('\n')}`));
      });
      waiters.add(check);
      check();
    });

  const listening = await waitForLog((e) => e.msg === 'listening');
  return {
    url: String(listening.url),
    pid: child.pid!,
    lines,
    stderr: () => stderr,
    entries,
    waitForLog,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
