/**
 * Under a list shown in pages (lib/flag-list.ts pageOf): Previous / Page N of M / Next, a field to
 * jump to a page, and the page size. Paging moves the view and the focus to `topId` (the list's
 * count line), so Next does not leave the person at the bottom of the new page.
 */
import { useEffect, useState } from 'preact/hooks';
import { PAGE_SIZES } from '../lib/flag-list.js';
import { formatCount } from '../lib/format.js';

interface PagerProps {
  page: number;
  pages: number;
  onPage: (page: number) => void;
  /** The element paging scrolls to and focuses (it needs tabindex="-1"). */
  topId: string;
  /** With both, a page-size chooser. */
  size?: number;
  onSize?: (size: number) => void;
  /** Names the controls apart when a page has two pagers. */
  idPrefix?: string;
}

function toTop(topId: string): void {
  const el = document.getElementById(topId);
  window.scrollTo(0, 0);
  el?.focus({ preventScroll: true });
}

export function Pager({ page, pages, onPage, topId, size, onSize, idPrefix = 'pager' }: PagerProps) {
  const [typed, setTyped] = useState(String(page));
  useEffect(() => setTyped(String(page)), [page]);
  const go = (p: number) => {
    onPage(p);
    toTop(topId);
  };
  const sizeChooser = size !== undefined && onSize !== undefined && (
    <div class="pager-size">
      <label for={`${idPrefix}-size`}>Per page</label>
      <select
        id={`${idPrefix}-size`}
        value={String(size)}
        onChange={(e) => {
          onSize(Number((e.currentTarget as HTMLSelectElement).value));
          toTop(topId);
        }}
      >
        {PAGE_SIZES.map((n) => (
          <option key={n} value={String(n)}>
            {n}
          </option>
        ))}
      </select>
    </div>
  );
  if (pages <= 1) return sizeChooser ? <div class="pager">{sizeChooser}</div> : null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>
        Previous
      </button>
      <span>
        Page {formatCount(page)} of {formatCount(pages)}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => go(page + 1)}>
        Next
      </button>
      <form
        class="pager-jump"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number(typed);
          if (Number.isInteger(n) && n >= 1) go(Math.min(n, pages));
        }}
      >
        <label for={`${idPrefix}-jump`}>Go to page</label>
        <input
          id={`${idPrefix}-jump`}
          type="number"
          inputMode="numeric"
          min={1}
          max={pages}
          value={typed}
          onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit">Go</button>
      </form>
      {sizeChooser}
    </nav>
  );
}
