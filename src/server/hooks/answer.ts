/**
 * What a webhook delivery is answered, and what a push asks the store to refresh. A push names a
 * Git ref (or, from the generic hook, a reference name; or nothing: every reference): it is mapped
 * to the names the store keeps (referenceCandidates), only those the store tracks are kept (a
 * push elsewhere is ignored), and those already serving the pushed commit (`after`) are dropped,
 * so a late or repeated delivery costs no look at the backend.
 *
 * Body (every field always present): `{"status": "accepted" | "ignored" | "pong", "references":
 * [...], "all": bool, "reason": "..."}`; `all`: every tracked reference is refreshed.
 */
import type { SnapshotStore } from '../../store/types.js';
import { referenceCandidates, type HookEvent } from './request.js';

export interface Answer {
  readonly status: 'accepted' | 'ignored' | 'pong';
  readonly references: readonly string[];
  readonly all: boolean;
  readonly reason: string;
}

export const ignored = (reason: string): Answer => ({ status: 'ignored', references: [], all: false, reason });

export function answerPush(store: SnapshotStore, event: Extract<HookEvent, { kind: 'push' }>): Answer {
  if (event.gitRef === undefined && event.reference === undefined) return { status: 'accepted', references: [], all: true, reason: '' };
  const named = event.gitRef !== undefined ? referenceCandidates(event.gitRef) : [event.reference as string];
  const shown = event.gitRef ?? (event.reference as string);
  const tracked = named.filter((ref) => store.tracks?.(ref) ?? true);
  if (tracked.length === 0) return ignored(`reference "${shown}" is not served`);
  // The commit pushed is already served (a late or repeated delivery): nothing to look at.
  const moved = event.after === undefined ? tracked : tracked.filter((ref) => store.get(ref)?.revision !== event.after);
  if (moved.length === 0) return ignored(`reference "${shown}" already serves ${event.after as string}`);
  return { status: 'accepted', references: moved, all: false, reason: '' };
}
