/** Every namespace of the reference, each with links to its flags and segments. */
import { PageTitle } from '../components/page-title.js';
import { ErrorBox, Loading } from '../components/status-line.js';
import { useApp } from '../context.js';
import { withQuery } from '../api.js';
import { paths } from '../lib/routes.js';
import { Link } from '../router.js';
import type { Namespace, Page } from '../types.js';
import { useApi } from '../use-api.js';

export function NamespacesPage() {
  const { reference } = useApp();
  const res = useApi<Page & { namespaces: Namespace[] }>(withQuery('/api/v1/namespaces', { reference }));
  return (
    <>
      <PageTitle title="Namespaces" />
      {res.state === 'loading' && <Loading what="namespaces" />}
      {res.state === 'error' && <ErrorBox error={res.error} />}
      {res.state === 'ok' && (
        <ul class="cards">
          {res.data.namespaces.map((ns) => (
            <li key={ns.key} class="card">
              <h2>
                <Link href={paths.flags(ns.key, reference)}>{ns.name || ns.key}</Link>
              </h2>
              <p class="muted">
                <code>{ns.key}</code>
                {ns.protected ? ' · protected' : ''}
              </p>
              {ns.description !== '' && <p>{ns.description}</p>}
              <p>
                <Link href={paths.flags(ns.key, reference)}>Flags</Link> · <Link href={paths.segments(ns.key, reference)}>Segments</Link>
              </p>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
