/** Snapshots from YAML text for the diff tests (loaded as vexil loads state files). */
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';

export function snapshotOf(yaml: string, reference = 'main'): Snapshot {
  const r = load([{ path: 'features.yml', bytes: new TextEncoder().encode(yaml) }], { reference, revision: reference, now: new Date('2026-01-01T00:00:00Z') });
  if (r.snapshot === undefined) throw new Error(`invalid test state: ${JSON.stringify(r.problems)}`);
  return r.snapshot;
}
