/**
 * Positions of flags (or of a key under a flag) in the state files, for checks that run on a built
 * snapshot: the files are parsed again and declarations found by the semantic pass
 * (semantic.ts: the document and index of each flag's first declaration), then located as every
 * other finding is (locate.ts). Costs one parse of the state; meant for the CLI, not for serving.
 * Pure: files in, positions out.
 */
import type { Finding } from '../finding.js';
import type { LoadedDocument } from '../document.js';
import type { StateFile } from '../load.js';
import { locateFindings } from '../locate.js';
import { decodeUtf8, fileKindOf, parseText, type FileKind } from '../parse.js';
import { checkDocuments } from '../semantic.js';

export interface FlagPlace {
  readonly namespace: string;
  readonly flag: string;
  /** A path under the flag (`['metadata', 'expires']`); the flag's `key` when absent or not present in the document. */
  readonly under?: readonly string[];
}

export interface Position {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One position per place, in order; undefined for a flag no file declares. */
export function locateFlags(files: readonly StateFile[], places: readonly FlagPlace[]): (Position | undefined)[] {
  if (places.length === 0) return [];
  const docs: LoadedDocument[] = [];
  const texts = new Map<string, { text: string; kind: FileKind }>();
  for (const file of files) {
    const kind = fileKindOf(file.path);
    if (typeof kind !== 'string') continue;
    const decoded = decodeUtf8(file.bytes);
    if (!('text' in decoded)) continue;
    const parsed = parseText(decoded.text, kind);
    if (!('docs' in parsed)) continue;
    texts.set(file.path, { text: decoded.text, kind });
    parsed.docs.forEach((data, index) => {
      if (data !== null && data !== undefined) docs.push({ file: file.path, index, data });
    });
  }
  const { namespaces } = checkDocuments(docs, true);
  // One locating pass per file, whatever the number of places in it.
  const byFile = new Map<string, { findings: Finding[]; slots: number[] }>();
  places.forEach((p, slot) => {
    const d = namespaces.get(p.namespace)?.flags.get(p.flag);
    if (d === undefined) return;
    const under = p.under !== undefined && has(d.data, p.under) ? p.under : ['key'];
    let group = byFile.get(d.doc.file);
    if (group === undefined) byFile.set(d.doc.file, (group = { findings: [], slots: [] }));
    group.findings.push({ severity: 'warning', rule: 'flag.expired', message: '', doc: d.doc.index, path: ['flags', d.index, ...under], at: 'key' });
    group.slots.push(slot);
  });
  const out: (Position | undefined)[] = places.map(() => undefined);
  for (const [file, group] of byFile) {
    const t = texts.get(file)!;
    locateFindings(file, t.text, t.kind, group.findings).forEach((p, i) => {
      out[group.slots[i]!] = { file, line: p.line, column: p.column };
    });
  }
  return out;
}

function has(data: unknown, path: readonly string[]): boolean {
  let node = data;
  for (const k of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, k)) return false;
    node = (node as Record<string, unknown>)[k];
  }
  return true;
}
