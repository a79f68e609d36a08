/**
 * The example state of examples/ (namespaces `default` and `checkout`), copied to a temp folder
 * (removed at teardown) for a test that serves it with `vexil serve` and may edit it.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

/** The state files of examples/ (its config/ and flag tests are not state). */
export const EXAMPLE_STATE_FILES: readonly string[] = ['default.features.yml', 'segments.features.yml', 'checkout/features.yml'];

/** A temp folder holding a copy of the example state; returns its path. */
export function copyExampleState(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-examples-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of EXAMPLE_STATE_FILES) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(EXAMPLES, file), join(dir, file));
  }
  return dir;
}
