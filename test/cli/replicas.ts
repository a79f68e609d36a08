/**
 * What the coordinated-replica tests ask of a running `vexil serve`: its /meta/snapshots, the
 * revision it serves (X-Vexil-Revision of /ready), each replica's coordination role, and a bounded
 * wait for a condition over them.
 */
import type { ServeProcess } from '../auth/process.js';

export interface Snapshots {
  coordination?: { type: string; role: string; healthy: boolean };
  references: Array<{ reference: string; revision?: { id: string }; clusterRevision?: string }>;
}

/** /meta/snapshots, or undefined when the replica does not answer (one the test killed). */
export async function snapshots(r: ServeProcess): Promise<Snapshots | undefined> {
  try {
    const res = await fetch(`${r.url}/meta/snapshots`);
    return res.ok ? ((await res.json()) as Snapshots) : undefined;
  } catch {
    return undefined;
  }
}

/** The revision the replica serves (null while it is not ready). */
export async function servedRevision(r: ServeProcess): Promise<string | null> {
  const res = await fetch(`${r.url}/ready`);
  await res.arrayBuffer();
  return res.status === 200 ? res.headers.get('x-vexil-revision') : null;
}

/** Each replica's coordination role, in order ('down' for one that does not answer). */
export async function roles(replicas: readonly ServeProcess[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of replicas) out.push((await snapshots(r))?.coordination?.role ?? 'down');
  return out;
}

/** Polls `cond` every 50 ms until it holds; throws naming `what` after `ms`. */
export async function waitFor(what: string, cond: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
