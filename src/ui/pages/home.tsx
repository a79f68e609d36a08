/**
 * `/ui` (and `/`): opens the flags of the namespace last used in this browser, or `default`, or the
 * first namespace of the reference (lib/last-namespace.ts), replacing the address so Back does not
 * return here. When the list cannot be read (a token scoped to one namespace may not list them),
 * the remembered namespace is opened as it is. The list of every namespace stays at /ui/namespaces.
 */
import { useEffect } from 'preact/hooks';
import { withQuery } from '../api.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { homeNamespace, lastNamespace } from '../lib/last-namespace.js';
import { paths } from '../lib/routes.js';
import { Link, navigate } from '../router.js';
import type { Namespace, Page } from '../types.js';
import { useApi } from '../use-api.js';

export function HomePage() {
  const { reference } = useApp();
  const res = useApi<Page & { namespaces: Namespace[] }>(withQuery('/api/v1/namespaces', { reference }));
  const remembered = lastNamespace(localStorage);
  const target =
    res.state === 'ok' ? homeNamespace(remembered, res.data.namespaces.map((n) => n.key)) : res.state === 'error' ? remembered : undefined;
  useEffect(() => {
    if (target !== undefined) navigate(paths.flags(target, reference), { replace: true });
  }, [target, reference]);
  if (res.state === 'error' && target === undefined) return <ErrorBox error={res.error} />;
  if (res.state === 'ok' && target === undefined) {
    return (
      <>
        <PageTitle title="No namespaces" />
        <p>
          The reference viewed has no namespace. <Link href={paths.status(reference)}>Status</Link> says what it serves.
        </p>
      </>
    );
  }
  return <Loading what="the flags" />;
}
