/**
 * Reads a state fixture (fixtures/state/<name>/) the way a source would hand it to the loader:
 * the index file at the root (`.vexil.yml` preferred over `.flipt.yml`), the selection, the bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { INDEX_FILE_NAMES, selectStateFiles } from '../../src/state/load.js';
import type { StateFile } from '../../src/state/load.js';
import type { Problem } from '../../src/model/problem.js';

export const STATE_FIXTURES = fileURLToPath(new URL('../../fixtures/state/', import.meta.url));

export function fixtureDir(name: string): string {
  return join(STATE_FIXTURES, name);
}

/** Every file under `dir`, relative and `/`-separated. */
export function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else out.push(rel);
  }
  return out;
}

export function stateFile(dir: string, rel: string): StateFile {
  const bytes = new Uint8Array(readFileSync(join(dir, rel)));
  return { path: rel, bytes, contentId: createHash('sha1').update(bytes).digest('hex') };
}

/** A single file of a fixture, as a one-file state. */
export function fixtureFile(name: string, rel: string): StateFile {
  return stateFile(fixtureDir(name), rel);
}

export interface Fixture {
  readonly all: string[];
  readonly index?: StateFile;
  readonly selected: string[];
  readonly selectionProblems: Problem[];
  readonly files: StateFile[];
}

export function readFixture(name: string): Fixture {
  const dir = fixtureDir(name);
  const all = listFiles(dir);
  const indexName = INDEX_FILE_NAMES.find((n) => existsSync(join(dir, n)));
  const index = indexName ? stateFile(dir, indexName) : undefined;
  const selection = selectStateFiles(all, index);
  return {
    all,
    index,
    selected: selection.paths,
    selectionProblems: selection.problems,
    files: selection.paths.map((p) => stateFile(dir, p)),
  };
}
