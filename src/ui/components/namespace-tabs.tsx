/** Flags | Segments tabs of one namespace, with the namespace named above them. */
import { useApp } from '../context.js';
import { paths } from '../lib/routes.js';
import { Link } from '../router.js';

export function NamespaceTabs({ namespace, current }: { namespace: string; current: 'flags' | 'segments' }) {
  const { reference } = useApp();
  return (
    <nav class="tabs" aria-label={`Namespace ${namespace}`}>
      <Link href={paths.namespaces(reference)}>Namespaces</Link>
      <span aria-hidden="true">/</span>
      <code>{namespace}</code>
      <span aria-hidden="true">/</span>
      <Link href={paths.flags(namespace, reference)} aria-current={current === 'flags' ? 'page' : undefined}>
        Flags
      </Link>
      <Link href={paths.segments(namespace, reference)} aria-current={current === 'segments' ? 'page' : undefined}>
        Segments
      </Link>
    </nav>
  );
}
