/**
 * The I/O of a policy file for `vexil validate`: where it is (`--policy FILE`, else
 * `.vexil/policy.yml` at a state folder's root when it exists), its size checked before reading,
 * and its bytes handed to the pure reader (src/state/policy/policy-file.ts).
 */
import { open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Problem } from '../model/problem.js';
import { tooLarge } from '../sources/file-refused.js';
import { MAX_POLICY_FILE_SIZE, readPolicy, type Policy } from '../state/policy/policy-file.js';

export const DEFAULT_POLICY_PATH = join('.vexil', 'policy.yml');

export interface PolicyFile {
  /** As shown in problems. */
  readonly display: string;
  readonly policy?: Policy;
  readonly problems: readonly Problem[];
  readonly text?: string;
}

/** `.vexil/policy.yml` of a state folder, when it is a file. */
export async function defaultPolicyPath(folder: string, cwd: string): Promise<string | undefined> {
  const st = await stat(resolve(cwd, folder, DEFAULT_POLICY_PATH)).catch(() => undefined);
  return st?.isFile() ? join(folder, DEFAULT_POLICY_PATH) : undefined;
}

export async function loadPolicyFile(path: string, cwd: string): Promise<PolicyFile> {
  const display = path.split('\\').join('/');
  let bytes: Uint8Array;
  try {
    const fh = await open(resolve(cwd, path), 'r');
    try {
      const st = await fh.stat();
      if (st.size > MAX_POLICY_FILE_SIZE) throw tooLarge(display, st.size, MAX_POLICY_FILE_SIZE);
      const buf = await fh.readFile();
      bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } finally {
      await fh.close();
    }
  } catch (err) {
    const tooBig = (err as { rule?: string }).rule === 'file.too-large';
    return {
      display,
      problems: [{
        severity: 'error', rule: tooBig ? 'file.too-large' : 'file.unreadable', file: display, line: 0, column: 0,
        message: tooBig ? (err as Error).message : `the policy file ${display} could not be read: ${(err as Error).message}`,
        hint: tooBig ? `keep the policy file under ${MAX_POLICY_FILE_SIZE} bytes` : 'check the path given to --policy and its permissions',
      }],
    };
  }
  const read = readPolicy(display, bytes);
  const text = new TextDecoder().decode(bytes);
  return 'policy' in read ? { display, policy: read.policy, problems: [], text } : { display, problems: read.problems, text };
}
