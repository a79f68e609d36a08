/**
 * Runs `vexil bundle …` in this process through the real dispatch (src/cli/run.ts), or through
 * runBundle with injected environment/stdin where a test needs them, with run()'s exit-status rules.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBundle, type BundleDeps } from '../../src/cli/bundle/command.js';
import type { CliIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { UsageError } from '../../src/cli/usage.js';
import { REPO } from './run-cli.js';

export { REPO };

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function capture(cwd: string): { io: CliIO; out: { stdout: string; stderr: string } } {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), cwd },
  };
}

/** `vexil bundle ARGS` as the executable runs it (environment: a copy without VEXIL_* variables). */
export async function vexilBundle(args: readonly string[], opts: { cwd?: string; deps?: BundleDeps } = {}): Promise<Result> {
  const { io, out } = capture(opts.cwd ?? REPO);
  if (opts.deps === undefined) {
    const code = await run(['bundle', ...args], io);
    return { code, ...out };
  }
  let code: number;
  try {
    code = await runBundle(args, io, { env: cleanEnv(), ...opts.deps });
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`vexil: ${err.message}\n\n${err.usage}`);
      code = 2;
    } else {
      io.stderr(`vexil: ${err instanceof Error ? err.message : String(err)}\n`);
      code = 1;
    }
  }
  return { code, ...out };
}

/** process.env without VEXIL_* (as test/cli/run-cli.ts gives the child), plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
  return { ...env, ...extra };
}

export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'vexil-bundles-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
