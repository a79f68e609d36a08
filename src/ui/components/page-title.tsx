/** The page's one `h1`, also the document title; focusable so navigation can move focus to it. */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · vexil`;
  }, [title]);
  return <h1 tabIndex={-1}>{children ?? title}</h1>;
}
