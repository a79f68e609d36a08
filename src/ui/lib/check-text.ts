/**
 * The semantic checks as the pages word them: a count per flag for the flags list's badge, a
 * location line (`file:line:column`), and what a check concerns when it is not the flag itself
 * (a segment the flag uses). Pure, no DOM.
 */
import type { Check } from '../types.js';

export interface CheckCount {
  readonly errors: number;
  readonly warnings: number;
}

/**
 * Errors and warnings per flag key (information is not counted: it asks for no change). A check
 * about a segment counts for no flag here: the flag page lists it under the flags that use it.
 */
export function countByFlag(checks: readonly Check[]): Map<string, CheckCount> {
  const out = new Map<string, CheckCount>();
  for (const c of checks) {
    if (c.flagKey === '' || (c.severity !== 'error' && c.severity !== 'warning')) continue;
    const old = out.get(c.flagKey) ?? { errors: 0, warnings: 0 };
    out.set(c.flagKey, c.severity === 'error' ? { ...old, errors: old.errors + 1 } : { ...old, warnings: old.warnings + 1 });
  }
  return out;
}

/** `1 warning`, `2 errors, 1 warning`; "" for none. */
export function countText(n: CheckCount | undefined): string {
  if (n === undefined) return '';
  const parts: string[] = [];
  if (n.errors > 0) parts.push(n.errors === 1 ? '1 error' : `${n.errors} errors`);
  if (n.warnings > 0) parts.push(n.warnings === 1 ? '1 warning' : `${n.warnings} warnings`);
  return parts.join(', ');
}

/** `growth.features.yml:16:9` (the line and column left out when unknown). */
export function locationText(c: Pick<Check, 'file' | 'line' | 'column'>): string {
  if (c.file === '') return '';
  if (c.line === 0) return c.file;
  return c.column === 0 ? `${c.file}:${c.line}` : `${c.file}:${c.line}:${c.column}`;
}

/** Errors first, then warnings, then information; in file order within each. */
export function bySeverity(checks: readonly Check[]): Check[] {
  const rank = (s: string) => (s === 'error' ? 0 : s === 'warning' ? 1 : 2);
  return [...checks].sort((a, b) => rank(a.severity) - rank(b.severity));
}
