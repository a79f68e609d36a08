/** Flags | Segments tabs of one namespace (the namespace itself is chosen in the header's switcher). */
import { useApp } from '../context.js';
import { paths } from '../lib/routes.js';
import { Link } from '../router.js';

export function NamespaceTabs({ namespace, current }: { namespace: string; current: 'flags' | 'segments' }) {
  const { reference } = useApp();
  return (
    <nav class="tabs" aria-label={`Namespace ${namespace}`}>
      <Link href={paths.flags(namespace, reference)} aria-current={current === 'flags' ? 'page' : undefined}>
        Flags
      </Link>
      <Link href={paths.segments(namespace, reference)} aria-current={current === 'segments' ? 'page' : undefined}>
        Segments
      </Link>
    </nav>
  );
}
