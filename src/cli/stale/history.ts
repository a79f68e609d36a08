/**
 * Since which commit each flag has served its one outcome: walks the first-parent history of a
 * local Git repository back from the commit read, loading the state at each commit with the loader
 * `vexil diff --repo` uses (diff/load-side.ts), and keeps, per flag, the oldest commit of the
 * unbroken run in which the flag existed with the same uniform outcome. A commit whose state is
 * invalid ends every run (the server would not have served it). Bounded: at most `maxCommits`
 * commits are read (the starting one included); a run that reaches the bound is reported as
 * `bounded` (the outcome may be older). A commit whose state folder has the same tree as its child
 * is not loaded again. Stops early once every run has ended.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { atomicFs } from '../../sources/git/atomic-fs.js';
import { sameOutcome, uniformOutcome, type UniformOutcome } from '../../state/checks/uniform-outcome.js';
import type { Snapshot } from '../../model/snapshot.js';
import { loadRevision } from '../diff/load-side.js';

export interface CommitInfo {
  readonly commit: string;
  /** Committer date, RFC 3339 (UTC). */
  readonly date: string;
  /** First line of the message. */
  readonly subject: string;
}

export interface Since extends CommitInfo {
  /** True when the run reached the bound of the walk: the outcome may be older than this commit. */
  readonly bounded: boolean;
}

export interface HistoryResult {
  /** By `namespace/flag`. */
  readonly since: Map<string, Since>;
  readonly commitsRead: number;
}

/** The uniform outcomes of a snapshot, by `namespace/flag`. */
export function uniformOutcomes(snapshot: Snapshot): Map<string, UniformOutcome> {
  const out = new Map<string, UniformOutcome>();
  for (const ns of snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      const o = uniformOutcome(flag);
      if (o !== undefined) out.set(`${ns.key}/${flag.key}`, o);
    }
  }
  return out;
}

export async function walkHistory(opts: {
  readonly repo: string;
  readonly start: string;
  readonly directory?: string;
  readonly maxCommits: number;
  /** The uniform outcomes at `start`. */
  readonly outcomes: ReadonlyMap<string, UniformOutcome>;
}): Promise<HistoryResult> {
  const gitdir = existsSync(join(opts.repo, '.git')) ? join(opts.repo, '.git') : opts.repo;
  const fs = atomicFs as never;
  const cache = {};
  const info = async (oid: string): Promise<CommitInfo & { parent?: string; tree: string | undefined }> => {
    const { commit } = await git.readCommit({ fs, gitdir, oid, cache });
    let tree: string | undefined = commit.tree;
    if (opts.directory !== undefined && opts.directory !== '' && opts.directory !== '.') {
      tree = await git.readTree({ fs, gitdir, oid, filepath: opts.directory, cache }).then((t) => t.oid, () => undefined);
    }
    return {
      commit: oid,
      date: new Date(commit.committer.timestamp * 1000).toISOString().replace('.000Z', 'Z'),
      subject: commit.message.split('\n', 1)[0] ?? '',
      ...(commit.parent[0] !== undefined ? { parent: commit.parent[0] } : {}),
      tree,
    };
  };

  let current = await info(opts.start);
  const since = new Map<string, Since>();
  const alive = new Set(opts.outcomes.keys());
  for (const id of alive) since.set(id, { ...pick(current), bounded: false });
  let outcomes: ReadonlyMap<string, UniformOutcome> = opts.outcomes;
  let read = 1;
  while (alive.size > 0) {
    if (current.parent === undefined) break; // the root commit: every run starts there
    if (read >= opts.maxCommits) {
      for (const id of alive) since.set(id, { ...since.get(id)!, bounded: true });
      break;
    }
    const parent = await info(current.parent);
    read++;
    if (parent.tree === undefined || parent.tree !== current.tree) {
      if (parent.tree === undefined) outcomes = new Map();
      else {
        const side = await loadRevision(opts.repo, parent.commit, opts.directory);
        outcomes = side.snapshot !== undefined ? uniformOutcomes(side.snapshot) : new Map();
      }
    }
    for (const id of [...alive]) {
      const then = outcomes.get(id);
      if (then !== undefined && sameOutcome(then, opts.outcomes.get(id)!)) since.set(id, { ...pick(parent), bounded: false });
      else alive.delete(id);
    }
    current = parent;
  }
  return { since, commitsRead: read };
}

function pick(c: CommitInfo): CommitInfo {
  return { commit: c.commit, date: c.date, subject: c.subject };
}
