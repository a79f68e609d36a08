/**
 * The header's reference switcher: the references the server has built (revision, age, status),
 * plus a field for any other reference (a branch, tag or commit id), which the server builds on
 * request. Switching keeps the page and changes `ref` in the address.
 */
import { useState } from 'preact/hooks';
import { useApp } from '../context.js';
import { age, shortRevision } from '../lib/format.js';
import { switchReference } from '../lib/routes.js';
import { navigate } from '../router.js';
import type { ReferenceStatus } from '../types.js';

function statusWord(s: ReferenceStatus): string {
  if (s.lastRejected) return 'rejected change';
  if (s.stale) return 'stale';
  if (s.lastError) return 'error';
  return s.revision ? 'ok' : 'not loaded';
}

export function referenceLabel(s: ReferenceStatus, now: number): string {
  const parts = [s.reference];
  if (s.revision) parts.push(shortRevision(s.revision.id));
  const a = age(s.loadedAt, now);
  if (a !== '') parts.push(a);
  const w = statusWord(s);
  if (w !== 'ok') parts.push(w);
  return parts.join(' · ');
}

export function ReferenceSwitcher() {
  const { reference, snapshots } = useApp();
  const [typed, setTyped] = useState('');
  const refs = snapshots?.references ?? [];
  const current = reference ?? snapshots?.defaultReference ?? '';
  const known = refs.some((r) => r.reference === current);
  const now = Date.now();
  const go = (ref: string) => {
    const r = ref.trim();
    // The live address: pages keep their inputs in it with replaceState, which `loc` does not see.
    navigate(switchReference(location.pathname + location.search, r === '' || r === snapshots?.defaultReference ? undefined : r));
  };
  return (
    <div class="ref-switcher">
      <label for="ref-select">Reference</label>
      <select id="ref-select" value={current} onChange={(e) => go((e.currentTarget as HTMLSelectElement).value)}>
        {refs.map((r) => (
          <option key={r.reference} value={r.reference}>
            {referenceLabel(r, now)}
          </option>
        ))}
        {!known && current !== '' && <option value={current}>{current}</option>}
      </select>
      <form
        class="ref-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim() !== '') go(typed);
          setTyped('');
        }}
      >
        <label for="ref-typed" class="visually-hidden">
          Other reference (branch, tag or commit id)
        </label>
        <input
          id="ref-typed"
          placeholder="branch, tag or commit"
          value={typed}
          onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)}
          autocomplete="off"
          spellcheck={false}
        />
        <button type="submit">Go</button>
      </form>
    </div>
  );
}
