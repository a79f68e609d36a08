/**
 * Client-side navigation with the History API: a handful of fixed pages (lib/routes.ts) need no
 * router library. `useLocation()` re-renders on navigation; `<Link>` keeps ordinary links
 * (middle click, new tab, copy address) working and only takes over plain left clicks.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export function navigate(url: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
  if (!opts.replace) window.scrollTo(0, 0);
}

export interface UiLocation {
  path: string;
  query: URLSearchParams;
  /** Path and query, as a link would write it. */
  href: string;
}

function current(): UiLocation {
  return { path: location.pathname, query: new URLSearchParams(location.search), href: location.pathname + location.search };
}

export function useLocation(): UiLocation {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return loc;
}

interface LinkProps {
  href: string;
  children?: ComponentChildren;
  class?: string;
  id?: string;
  'aria-current'?: 'page' | undefined;
  'aria-label'?: string;
}

export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
