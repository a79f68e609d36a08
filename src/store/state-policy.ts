/**
 * The policy file of a revision (`.vexil/policy.yml` at the state root), kept with the snapshot
 * built from that revision, so that the guards on a change (diff/guards.ts) can take the policy of
 * a side wherever the snapshot is: `GET /api/v1/diff?policy=true` (the store's snapshots) and
 * `vexil validate --base` / `vexil diff --policy` (Git revisions and folders). Read by readState
 * after a successful build, parsed by the one policy reader (state/policy/policy-file.ts).
 *
 * A side table like the test contexts (test-contexts.ts), for the same reason: state/ builds and
 * reuses snapshots and knows nothing of the policy file. The policy never decides whether a state
 * is accepted: a policy file that cannot be read or parsed is kept as its located problems, which
 * the guards' users report (the API as a 400, the CLI like a state file's problems).
 *
 * Bounded: the file's size is checked before it is read (MAX_POLICY_FILE_SIZE, 256 KiB), and what
 * is kept is the parsed policy or its problems, not the bytes.
 */
import type { Problem } from '../model/problem.js';
import type { Snapshot } from '../model/snapshot.js';
import { MAX_POLICY_FILE_SIZE, readPolicy, type Policy } from '../state/policy/policy-file.js';
import type { SourceFile } from '../sources/types.js';

/** Where a state keeps its policy file, relative to the state root. */
export const STATE_POLICY_PATH = '.vexil/policy.yml';

/** A side's policy file: its path (relative to the state root) and the policy, or its located problems. */
export type StatePolicy =
  | { readonly file: string; readonly policy: Policy }
  | { readonly file: string; readonly problems: readonly Problem[] };

const bySnapshot = new WeakMap<Snapshot, StatePolicy>();

/** The policy file of the revision `snapshot` was built from; undefined when it has none (or it was not read). */
export function statePolicyOf(snapshot: Snapshot): StatePolicy | undefined {
  return bySnapshot.get(snapshot);
}

export function keepStatePolicy(snapshot: Snapshot, policy: StatePolicy | undefined): void {
  if (policy === undefined) bySnapshot.delete(snapshot);
  else bySnapshot.set(snapshot, policy);
}

/** Reads and parses `.vexil/policy.yml` among `files`; undefined when there is none. Never throws. */
export async function readStatePolicy(files: readonly SourceFile[]): Promise<StatePolicy | undefined> {
  const f = files.find((x) => x.path === STATE_POLICY_PATH);
  if (f === undefined) return undefined;
  const file = f.path;
  const problem = (rule: 'file.too-large' | 'file.unreadable', message: string, hint: string): StatePolicy => ({
    file,
    problems: [{ severity: 'error', rule, file, line: 0, column: 0, message, hint }],
  });
  const tooLarge = (size: number) =>
    problem('file.too-large', `the policy file ${file} is ${size} bytes, over the limit of ${MAX_POLICY_FILE_SIZE}`, `keep the policy file under ${MAX_POLICY_FILE_SIZE} bytes`);
  if (f.size !== undefined && f.size > MAX_POLICY_FILE_SIZE) return tooLarge(f.size);
  let bytes: Uint8Array;
  try {
    bytes = await f.bytes();
  } catch (err) {
    return problem('file.unreadable', `the policy file ${file} could not be read: ${(err as Error).message}`, 'check the file (a link is not followed)');
  }
  if (bytes.byteLength > MAX_POLICY_FILE_SIZE) return tooLarge(bytes.byteLength);
  const read = readPolicy(file, bytes);
  return 'policy' in read ? { file, policy: read.policy } : { file, problems: read.problems };
}
