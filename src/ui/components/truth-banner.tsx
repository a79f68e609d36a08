/**
 * The truth banner: at the top of a page viewing a reference whose newest commit was rejected,
 * that never had a valid state, or that is stale, says so in words (served and rejected commit,
 * author, first problem) and links to its Status entry. The decision is lib/reference-truth.ts;
 * the app shell places it above every page viewing `?ref`, the diff page once per side.
 */
import { useApp } from '../context.js';
import { referenceTruth, truthHeading, truthSentence } from '../lib/reference-truth.js';
import { Link } from '../router.js';

export function TruthBanner({ reference, side }: { reference: string | undefined; side?: string }) {
  const { snapshots } = useApp();
  const truth = referenceTruth(snapshots, reference);
  if (truth === undefined) return null;
  const id = `truth-${side ?? 'page'}`;
  return (
    <div class={`truth-banner ${truth.kind}`} role="status" aria-labelledby={id} data-reference={truth.reference}>
      <h2 id={id}>
        <span aria-hidden="true">⚠ </span>
        {side !== undefined && `${side}: `}
        {truthHeading(truth)}
      </h2>
      <p>{truthSentence(truth)}</p>
      {truth.kind !== 'stale' && truth.problem !== undefined && (
        <p>
          First problem: <code>{truth.problem}</code>
        </p>
      )}
      <p>
        <Link href={truth.statusHref}>See {truth.reference} on the Status page</Link>
      </p>
    </div>
  );
}
