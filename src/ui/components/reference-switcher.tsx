/**
 * The header's reference switcher: the references the server keeps (revision, commit age, load
 * age, state), and a field that narrows that list as one types (hundreds of branches stay
 * findable) and goes to any other reference (a branch, tag or commit id, which the server builds
 * on request). Switching keeps the page and changes `ref` in the address. The app shell leaves it
 * out on pages where the reference changes nothing (Diff, Status). Words and search:
 * lib/reference-search.ts.
 */
import { useState } from 'preact/hooks';
import { useApp } from '../context.js';
import { goTarget, matchCountText, matchReferences, referenceLabel } from '../lib/reference-search.js';
import { switchReference } from '../lib/routes.js';
import { navigate } from '../router.js';

export { referenceLabel };

export function ReferenceSwitcher() {
  const { reference, snapshots } = useApp();
  const [typed, setTyped] = useState('');
  const [hint, setHint] = useState('');
  const refs = snapshots?.references ?? [];
  const current = reference ?? snapshots?.defaultReference ?? '';
  const known = refs.some((r) => r.reference === current);
  const shown = matchReferences(refs, typed, current);
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
        {shown.map((r) => (
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
          const target = goTarget(refs, typed);
          if (target === undefined) return;
          if ('choose' in target) {
            setHint(`${target.choose} references match: choose one in the Reference list.`);
            return;
          }
          setTyped('');
          setHint('');
          go(target.go);
        }}
      >
        <label for="ref-typed" class="visually-hidden">
          Other reference (branch, tag or commit id), or find one in the list
        </label>
        <input
          id="ref-typed"
          placeholder="find or type a reference"
          value={typed}
          onInput={(e) => {
            setTyped((e.currentTarget as HTMLInputElement).value);
            setHint('');
          }}
          autocomplete="off"
          spellcheck={false}
          aria-describedby="ref-matches"
        />
        <button type="submit">Go</button>
        <span id="ref-matches" class={typed.trim() === '' ? 'visually-hidden' : 'ref-matches muted'} aria-live="polite">
          {hint !== '' ? hint : typed.trim() === '' ? '' : matchCountText(refs, typed)}
        </span>
      </form>
    </div>
  );
}
