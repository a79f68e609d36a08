/** How `vexil bundle` shows sizes, digests and the bundle list. */
import type { StoredBundle } from '../../sources/oci/types.js';

/** `611 B`, `1.4 kB`, `12.0 MB` (SI units, as registries and docker show them). */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** `sha256:` and the first 12 hex digits: enough to tell bundles apart in a table. */
export function shortDigest(digest: string): string {
  const colon = digest.indexOf(':');
  return colon < 0 ? digest.slice(0, 12) : `${digest.slice(0, colon + 1)}${digest.slice(colon + 1, colon + 13)}`;
}

export function formatBundleTable(bundles: readonly StoredBundle[]): string {
  const rows = [
    ['NAME', 'DIGEST', 'CREATED', 'SIZE'],
    ...bundles.map((b) => [b.name, shortDigest(b.digest), b.created ?? '-', formatSize(b.size)]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `${r.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join('  ')}\n`).join('');
}

export function formatBundleJson(bundles: readonly StoredBundle[]): string {
  return `${JSON.stringify(
    bundles.map((b) => ({ name: b.name, digest: b.digest, created: b.created ?? null, size: b.size })),
    null,
    2,
  )}\n`;
}
