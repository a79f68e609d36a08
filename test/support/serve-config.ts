/**
 * A `vexil serve --config` file for tests that start the real CLI: a fresh temporary folder (removed
 * at teardown) holding `vexil.yml` with the loopback listener on a free port, JSON logs at info
 * (the tests read them), then the test's own lines. Relative paths in those lines (`cache_dir:
 * cache`) resolve against that folder, as the CLI resolves them against the config file's folder.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServeConfig {
  /** The temporary folder (the config file's folder). */
  readonly dir: string;
  /** The config file's path, for `--config`. */
  readonly config: string;
}

/** `lines(dir)`: the YAML lines after the listener and log lines (one string each). */
export function writeServeConfig(
  t: { teardown(fn: () => void): void },
  prefix: string,
  lines: (dir: string) => readonly string[],
): ServeConfig {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'vexil.yml');
  writeFileSync(config, ['server: { host: 127.0.0.1, http_port: 0 }', 'log: { level: info, encoding: json }', ...lines(dir), ''].join('\n'));
  return { dir, config };
}
