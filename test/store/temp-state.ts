/** Test helpers: temporary state folders made from the fixture state repos next to this file. */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SnapshotStore, StoreEvent } from '../../src/store/types.js';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A fresh temp folder holding a copy of `fixtures/<name>` (empty when no name). */
export function tempState(t: Teardown, fixture?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-state-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  if (fixture !== undefined) cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

/** The bytes of a fixture file, e.g. `fixture('hello/features.yml')`. */
export function fixture(rel: string): Buffer {
  return readFileSync(join(FIXTURES, rel));
}

/** Overwrites `dir/<rel>` with the fixture file `<name>/<rel>`. */
export function useFixture(dir: string, name: string, rel = 'features.yml'): void {
  writeFileSync(join(dir, rel), fixture(`${name}/${rel}`));
}

/** The next event of `type` (matching `pred`) the store emits. */
export function nextEvent<T extends StoreEvent['type']>(
  store: SnapshotStore,
  type: T,
  pred: (e: Extract<StoreEvent, { type: T }>) => boolean = () => true,
): Promise<Extract<StoreEvent, { type: T }>> {
  return new Promise((resolve) => {
    const off = store.subscribe((e) => {
      if (e.type === type && pred(e as Extract<StoreEvent, { type: T }>)) {
        off();
        resolve(e as Extract<StoreEvent, { type: T }>);
      }
    });
  });
}
