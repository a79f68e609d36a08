/**
 * Reads the YAML config file with the `yaml` package (the file is small, and it gives the line and
 * column of every key, which the error messages cite).
 */
import { readFileSync } from 'node:fs';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { ConfigProblem } from './errors.js';

/** Where a key and its value sit in the file (1-based). */
export interface FilePosition {
  line: number;
  col: number;
  keyLine: number;
  keyCol: number;
}

export interface ConfigFile {
  /** The plain data of the file ({} for an empty file). */
  data: Record<string, unknown>;
  /** Position of every key, by dotted path (array items as `path.0`). */
  positions: Map<string, FilePosition>;
  problems: ConfigProblem[];
}

export function readConfigFile(file: string): ConfigFile {
  const positions = new Map<string, FilePosition>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    return { data: {}, positions, problems: [{ path: '', message: `cannot read config file ${file}: ${reason}` }] };
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
      const what = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      return { path: '', message: `${where}: invalid YAML: ${what}` };
    });
    return { data: {}, positions, problems };
  }

  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) return { data: {}, positions, problems: [] };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return {
      data: {},
      positions,
      problems: [{ path: '', message: `${file}: the top level must be a mapping of keys (server, log, storage, authentication)` }],
    };
  }

  const at = (offset: number | undefined) => {
    const p = lineCounter.linePos(offset ?? 0);
    return { line: p.line, col: p.col };
  };
  const walk = (node: Node | null | undefined, path: string[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const keyNode = pair.key as Node | null;
        const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
        const keyPos = at(keyNode?.range?.[0]);
        const valueNode = pair.value as Node | null;
        const valuePos = valueNode?.range ? at(valueNode.range[0]) : keyPos;
        const childPath = [...path, key];
        positions.set(childPath.join('.'), { ...valuePos, keyLine: keyPos.line, keyCol: keyPos.col });
        walk(valueNode, childPath);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const pos = at((item as Node | null)?.range?.[0]);
        const childPath = [...path, String(i)];
        positions.set(childPath.join('.'), { ...pos, keyLine: pos.line, keyCol: pos.col });
        walk(item as Node | null, childPath);
      });
    }
  };
  walk(doc.contents, []);
  return { data: data as Record<string, unknown>, positions, problems: [] };
}
