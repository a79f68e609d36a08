/**
 * Where else a flag missing on the viewed reference can be found, bounded: which references to
 * ask (the server's default first, then others it serves, never the one viewed, at most
 * MAX_ELSEWHERE), and the sentence the flag page's not-found state says with the answers.
 * Asking one reference is one flag read (`GET /api/v1/namespaces/{ns}/flags/{key}?reference=`)
 * of a snapshot the server already holds. Pure, no DOM.
 */
import { formatCount } from './format.js';

/** At most this many references are asked. */
export const MAX_ELSEWHERE = 8;

/** The references to ask, default first, each one the server serves (has a revision for). */
export function referencesToAsk(
  snapshots: { defaultReference: string; references: readonly { reference: string; revision?: unknown }[] },
  viewed: string | undefined,
  max = MAX_ELSEWHERE,
): { ask: string[]; of: number } {
  const here = viewed ?? snapshots.defaultReference;
  const served = snapshots.references.filter((r) => r.revision !== undefined && r.reference !== here).map((r) => r.reference);
  const ordered = served.includes(snapshots.defaultReference) ? [snapshots.defaultReference, ...served.filter((r) => r !== snapshots.defaultReference)] : served;
  return { ask: ordered.slice(0, max), of: ordered.length };
}

/** What was asked, in words: `main and 7 other references (of 300 served)`. */
export function askedText(ask: readonly string[], of: number): string {
  const head = ask.length === 1 ? ask[0]! : `${ask[0]!} and ${formatCount(ask.length - 1)} other reference${ask.length === 2 ? '' : 's'}`;
  return of > ask.length ? `${head} (of ${formatCount(of)} served)` : head;
}
