/**
 * The evaluation contexts of a revision's flag test files (`*.test.yml` / `*.test.yaml`, and the
 * `tests:` section of the index `.vexil.yml`), kept with the snapshot built from that revision so
 * the impact preview can sample them wherever the snapshot is: `GET /api/v1/diff` (the store's
 * snapshots) and `vexil diff` (folders and Git revisions). Read by readState after a successful
 * build; parsed by the one flag-test reader `vexil test` uses (state/flag-tests/read-test-file.ts).
 * Part of reading a revision's files (read-state.ts), so it lives beside that reader in store/,
 * not with the backends.
 *
 * Test files never decide whether a state is accepted: a file that cannot be read or parsed, or a
 * case with a problem, only adds no context (`vexil test` is where those problems are reported).
 *
 * Bounded, since every built snapshot keeps them: test files over MAX_TEST_FILE_BYTES are skipped
 * and at most MAX_TEST_FILES_BYTES of them are read per revision; at most MAX_TEST_CONTEXTS distinct
 * contexts are kept, each at most MAX_TEST_CONTEXT_CHARS (keys and values), all together at most
 * MAX_TEST_CONTEXTS_CHARS; the others are skipped.
 */
import { readTestFile } from '../state/flag-tests/read-test-file.js';
import type { Snapshot } from '../model/snapshot.js';
import type { SourceFile } from '../sources/types.js';

export type TestContext = Readonly<Record<string, string>>;

export const MAX_TEST_CONTEXTS = 1000;
export const MAX_TEST_CONTEXT_CHARS = 16 * 1024;
export const MAX_TEST_CONTEXTS_CHARS = 1024 * 1024;
export const MAX_TEST_FILE_BYTES = 1024 * 1024;
export const MAX_TEST_FILES_BYTES = 8 * 1024 * 1024;

const TEST_FILE = /(^|\/)[^/]*\.test\.ya?ml$/;
const INDEX_WITH_TESTS = '.vexil.yml';

const NONE: readonly TestContext[] = Object.freeze([]);

/**
 * Snapshot → its test contexts. A side table rather than a snapshot field: snapshots are built (and
 * reused through the build cache) by state/, which knows nothing of test files; the entry goes away
 * with the snapshot.
 */
const bySnapshot = new WeakMap<Snapshot, readonly TestContext[]>();

/** The distinct contexts of the flag test files of the revision `snapshot` was built from (none if unknown). */
export function testContextsOf(snapshot: Snapshot): readonly TestContext[] {
  return bySnapshot.get(snapshot) ?? NONE;
}

export function keepTestContexts(snapshot: Snapshot, contexts: readonly TestContext[]): void {
  bySnapshot.set(snapshot, contexts);
}

/** Reads and parses the test files among `files`, in path order; see the bounds above. */
export async function readTestContexts(files: readonly SourceFile[]): Promise<readonly TestContext[]> {
  const tests = files.filter((f) => TEST_FILE.test(f.path) || f.path === INDEX_WITH_TESTS).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (tests.length === 0) return NONE;
  const seen = new Map<string, TestContext>();
  let bytesRead = 0;
  let chars = 0;
  for (const f of tests) {
    if (seen.size >= MAX_TEST_CONTEXTS || bytesRead >= MAX_TEST_FILES_BYTES) break;
    if (f.size !== undefined && f.size > MAX_TEST_FILE_BYTES) continue;
    let bytes: Uint8Array;
    try {
      bytes = await f.bytes();
    } catch {
      continue;
    }
    if (bytes.byteLength > MAX_TEST_FILE_BYTES) continue;
    bytesRead += bytes.byteLength;
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      continue;
    }
    let cases;
    try {
      cases = readTestFile(f.path, text, { section: f.path === INDEX_WITH_TESTS }).cases;
    } catch {
      continue; // whatever a hostile file makes the parser do, it only adds no context
    }
    for (const c of cases) {
      const entries = Object.entries(c.context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      let size = 0;
      for (const [k, v] of entries) size += k.length + v.length;
      if (size > MAX_TEST_CONTEXT_CHARS || chars + size > MAX_TEST_CONTEXTS_CHARS) continue;
      const key = JSON.stringify(entries);
      if (seen.has(key)) continue;
      if (seen.size >= MAX_TEST_CONTEXTS) break;
      // Null prototype, as the server builds request contexts; frozen: shared by every diff.
      seen.set(key, Object.freeze(Object.assign(Object.create(null) as Record<string, string>, c.context)));
      chars += size;
    }
  }
  return Object.freeze([...seen.values()]);
}
