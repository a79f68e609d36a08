/**
 * Whether the reference a page views is served as what its name says, decided in one place for
 * every page (the truth banner, components/truth-banner.tsx) from `/meta/snapshots`: its newest
 * revision was rejected (an older one is served, or none), it never had a valid state, or it is
 * stale. Also reads the store's "has no valid state" refusal (400) so error boxes can say it in
 * words and point at the Status entry. Pure, no DOM.
 */
import { location } from './excerpt.js';
import { shortRevision } from './format.js';

interface Rev {
  id: string;
  meta?: { author?: string };
}
interface RefStatus {
  reference: string;
  default?: boolean;
  revision?: Rev;
  lastRejected?: { revision: Rev; problems: readonly { severity: string; file: string; line: number; column: number; message: string }[] };
  stale?: string;
}

export type Truth =
  | { kind: 'rejected'; reference: string; served: string; rejected: string; author?: string; problem?: string; statusHref: string }
  | { kind: 'never-valid'; reference: string; rejected: string; author?: string; problem?: string; statusHref: string }
  | { kind: 'stale'; reference: string; served: string; why: string; statusHref: string };

/** The id the status page gives a reference's section (`#ref-…`): anything but [A-Za-z0-9_-] replaced. */
export function statusAnchor(reference: string): string {
  return `ref-${reference.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The Status page's entry of `reference`. */
export function statusHref(reference: string): string {
  return `/ui/status#${statusAnchor(reference)}`;
}

/**
 * What a page viewing `reference` (undefined: the server's default) must say about it, or
 * undefined when it is served as its name says (or the server does not list it, e.g. a commit id).
 */
export function referenceTruth(
  snapshots: { defaultReference: string; references: readonly RefStatus[] } | undefined,
  reference: string | undefined,
): Truth | undefined {
  if (snapshots === undefined) return undefined;
  const name = reference === undefined || reference === '' ? snapshots.defaultReference : reference;
  const s = snapshots.references.find((r) => r.reference === name);
  if (s === undefined) return undefined;
  const href = statusHref(name);
  if (s.lastRejected !== undefined) {
    const rej = s.lastRejected;
    const first = rej.problems.find((p) => p.severity === 'error') ?? rej.problems[0];
    const common = {
      reference: name,
      rejected: shortRevision(rej.revision.id),
      ...(rej.revision.meta?.author ? { author: rej.revision.meta.author } : {}),
      ...(first !== undefined ? { problem: `${location(first)} ${first.message}` } : {}),
      statusHref: href,
    };
    if (s.revision === undefined) return { kind: 'never-valid', ...common };
    return { kind: 'rejected', served: shortRevision(s.revision.id), ...common };
  }
  if (s.stale !== undefined && s.revision !== undefined) return { kind: 'stale', reference: name, served: shortRevision(s.revision.id), why: s.stale, statusHref: href };
  return undefined;
}

/** The banner's sentence (the heading says the reference; this says what is served instead). */
export function truthSentence(t: Truth): string {
  const by = (t.kind === 'rejected' || t.kind === 'never-valid') && t.author !== undefined ? ` by ${t.author}` : '';
  switch (t.kind) {
    case 'rejected':
      return `The newest commit of ${t.reference}, ${t.rejected}${by}, was rejected; this page shows ${t.served}, its last valid commit.`;
    case 'never-valid':
      return `${t.reference} has no valid state: its commit ${t.rejected}${by} was rejected and no earlier commit was ever valid, so nothing is served.`;
    case 'stale':
      return `${t.reference} may be out of date: this page shows ${t.served}, which the source has not confirmed lately (${t.why}).`;
  }
}

/** The banner's heading. */
export function truthHeading(t: Truth): string {
  return t.kind === 'stale' ? `${t.reference} is stale` : t.kind === 'never-valid' ? `${t.reference} was never valid` : `${t.reference}: newest commit rejected`;
}

/**
 * The reference named by the store's refusal `reference "X" has no valid state…` (400), or
 * undefined for any other error.
 */
export function noValidStateReference(error: { status: number; message: string }): string | undefined {
  if (error.status !== 400) return undefined;
  const m = /^reference "((?:[^"\\]|\\.)*)" has no valid state/.exec(error.message);
  return m?.[1];
}
