/**
 * The flag page's not-found state, continued: "This flag exists on: main, feature/x", each a link
 * to the flag on that reference, found by asking a bounded set of the references the server
 * serves (lib/flag-elsewhere.ts), or that none of them has it.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, withQuery } from '../api.js';
import { useApp } from '../context.js';
import { askedText, referencesToAsk } from '../lib/flag-elsewhere.js';
import { paths } from '../lib/routes.js';
import { Link } from '../router.js';

export function FlagElsewhere({ namespace, flagKey }: { namespace: string; flagKey: string }) {
  const { reference, snapshots } = useApp();
  const [found, setFound] = useState<string[] | undefined>(undefined);
  const plan = snapshots === undefined ? undefined : referencesToAsk(snapshots, reference);
  const asked = plan?.ask.join('\n');
  useEffect(() => {
    if (plan === undefined) return;
    const ctl = new AbortController();
    setFound(undefined);
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/flags/${encodeURIComponent(flagKey)}`;
    void Promise.allSettled(plan.ask.map((ref) => api(withQuery(path, { reference: ref }), { signal: ctl.signal }).then(() => ref))).then((answers) => {
      if (!ctl.signal.aborted) setFound(answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : [])));
    });
    return () => ctl.abort();
    // `asked` stands for the plan: a new read of the snapshots with the same references asks nothing again.
  }, [namespace, flagKey, asked]);
  if (plan === undefined || plan.ask.length === 0) return null;
  if (found === undefined) {
    return (
      <p class="muted" role="status">
        Looking for {flagKey} on {askedText(plan.ask, plan.of)}…
      </p>
    );
  }
  return (
    <p class="flag-elsewhere" role="status" id="flag-elsewhere">
      {found.length === 0 ? (
        <>
          This flag exists on none of the references looked at: {askedText(plan.ask, plan.of)}.
        </>
      ) : (
        <>
          This flag exists on:{' '}
          {found.map((ref, i) => (
            <Fragment key={ref}>
              {i > 0 && ', '}
              <Link href={paths.flag(namespace, flagKey, ref === snapshots?.defaultReference ? undefined : ref)}>
                {ref}
              </Link>
            </Fragment>
          ))}
          {plan.of > plan.ask.length && <> (looked at {askedText(plan.ask, plan.of)})</>}
        </>
      )}
    </p>
  );
}
