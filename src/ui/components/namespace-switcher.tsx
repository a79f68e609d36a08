/**
 * The header's namespace switcher, shown on the pages of one namespace (flags, a flag, segments, a
 * segment, the namespaces list): the namespaces of the reference viewed; choosing one opens the
 * same kind of list in it (a flag or segment page opens its list) and is remembered
 * (lib/last-namespace.ts) so "Flags" opens it next time.
 */
import { withQuery } from '../api.js';
import { useApp } from '../context.js';
import { rememberNamespace } from '../lib/last-namespace.js';
import { paths } from '../lib/routes.js';
import { navigate } from '../router.js';
import type { Namespace, Page } from '../types.js';
import { useApi } from '../use-api.js';

export function NamespaceSwitcher({ namespace, list }: { namespace: string | undefined; list: 'flags' | 'segments' }) {
  const { reference } = useApp();
  const res = useApi<Page & { namespaces: Namespace[] }>(withQuery('/api/v1/namespaces', { reference }));
  const keys = res.state === 'ok' ? res.data.namespaces.map((n) => ({ key: n.key, label: n.name !== '' && n.name !== n.key ? `${n.name} (${n.key})` : n.key })) : [];
  const known = namespace === undefined || keys.some((k) => k.key === namespace);
  const go = (ns: string) => {
    if (ns === '') return;
    rememberNamespace(localStorage, ns);
    navigate(list === 'segments' ? paths.segments(ns, reference) : paths.flags(ns, reference));
  };
  return (
    <div class="ns-switcher">
      <label for="ns-select">Namespace</label>
      <select id="ns-select" value={namespace ?? ''} onChange={(e) => go((e.currentTarget as HTMLSelectElement).value)}>
        {namespace === undefined && <option value="">Choose…</option>}
        {keys.map((k) => (
          <option key={k.key} value={k.key}>
            {k.label}
          </option>
        ))}
        {!known && <option value={namespace}>{namespace}</option>}
      </select>
    </div>
  );
}
