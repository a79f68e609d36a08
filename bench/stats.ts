/** Small statistics helpers for the benchmark reports. */

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Relative spread (max - min) / median, to show how noisy a figure is. */
export function spread(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  return (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

export const fmtInt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const fmtRatio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}×` : 'n/a');
export const fmtMs = (n: number): string => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : 'n/a');
export const fmtPct = (n: number): string => (Number.isFinite(n) ? `±${((n * 100) / 2).toFixed(0)}%` : 'n/a');
export const verdict = (ok: boolean): string => (ok ? 'PASS' : 'MISS');

/** Nearest-rank percentile (p in 0–100) of unsorted samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
