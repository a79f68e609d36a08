/**
 * Positions for problems, computed only for files that have some. Findings in YAML files are
 * located by a second js-yaml pass that records node offsets (yaml-positions.ts); syntax errors
 * are listed by the `yaml` package, which reports every error, not just the first. JSON files use
 * our offset-keeping reader.
 */
import { LineCounter, parseAllDocuments } from 'yaml';
import type { Finding, PathSegment } from './finding.js';
import { readJsonStream } from './json-positions.js';
import type { JsonNode } from './json-positions.js';
import { YAML_SCHEMA } from './parse.js';
import type { FileKind, SyntaxFailure } from './parse.js';
import { YamlPositions } from './yaml-positions.js';
import type { Problem } from './problem.js';

/** Past the first errors, a broken file mostly yields cascades (thousands for deep nesting). */
const MAX_SYNTAX_PROBLEMS = 20;
/** Characters; see yamlSyntaxProblems. */
export const YAML_PACKAGE_LIMIT = 2_000_000;

const SYNTAX_HINT = 'fix the syntax at this position; vexil validate shows every syntax error of the file';

/**
 * Every syntax error of a YAML file that js-yaml refused (`fallback` is js-yaml's own report).
 * Files over YAML_PACKAGE_LIMIT get js-yaml's first error only: the `yaml` package needs seconds
 * and hundreds of MB on multi-MB files.
 */
export function yamlSyntaxProblems(file: string, text: string, fallback: SyntaxFailure): Problem[] {
  const problems: Problem[] = [];
  if (text.length <= YAML_PACKAGE_LIMIT) problems.push(...allYamlErrors(file, text));
  if (problems.length > MAX_SYNTAX_PROBLEMS) {
    const more = problems.length - MAX_SYNTAX_PROBLEMS;
    problems.length = MAX_SYNTAX_PROBLEMS;
    const last = problems[MAX_SYNTAX_PROBLEMS - 1];
    problems[MAX_SYNTAX_PROBLEMS - 1] = { ...last, message: `${last.message} (and ${more} more syntax errors after this one)` };
  }
  if (problems.length === 0) {
    problems.push({
      severity: 'error',
      rule: /duplicate/i.test(fallback.message) ? 'yaml.duplicate-key' : 'yaml.syntax',
      file,
      line: Math.max(1, fallback.line),
      column: Math.max(1, fallback.column),
      message: fallback.message,
      hint: SYNTAX_HINT,
    });
  }
  return problems;
}

function allYamlErrors(file: string, text: string): Problem[] {
  const problems: Problem[] = [];
  try {
    const lineCounter = new LineCounter();
    const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, merge: true });
    if (Array.isArray(docs)) {
      for (const doc of docs) {
        for (const err of doc.errors) {
          const pos = lineCounter.linePos(err.pos[0]);
          problems.push({
            severity: 'error',
            rule: err.code === 'DUPLICATE_KEY' ? 'yaml.duplicate-key' : 'yaml.syntax',
            file,
            line: pos.line,
            column: pos.col,
            message: firstLine(err.message),
            hint: err.code === 'DUPLICATE_KEY' ? 'remove or rename one of the duplicated keys' : SYNTAX_HINT,
          });
        }
      }
    }
  } catch {
    // the slow parser gave up too: the caller falls back to js-yaml's report
  }
  return problems;
}

/** The first syntax error of a JSON stream (JSON errors cascade, so later ones would be noise). */
export function jsonSyntaxProblem(file: string, text: string): Problem {
  const read = readJsonStream(text);
  const offset = 'error' in read ? read.error.offset : 0;
  const message = 'error' in read ? read.error.message : 'invalid JSON';
  const pos = offsetToPosition(text, offset);
  return { severity: 'error', rule: 'json.syntax', file, line: pos.line, column: pos.column, message, hint: SYNTAX_HINT };
}

/** Attaches line/column to the findings of one file (documents numbered as js-yaml's loadAll does). */
export function locateFindings(
  file: string,
  text: string,
  kind: FileKind,
  findings: readonly Finding[],
): Problem[] {
  if (findings.length === 0) return [];
  const locate = kind === 'yaml' ? yamlLocator(text) : jsonLocator(text);
  return findings.map((f) => {
    let pos = { line: 1, column: 1 };
    try {
      pos = locate(f.doc, f.path, f.at ?? 'value');
    } catch {
      // keep the file start: a problem is never lost for want of a position
    }
    const p: Problem = { severity: f.severity, rule: f.rule, file, line: pos.line, column: pos.column, message: f.message };
    return f.hint === undefined ? p : { ...p, hint: f.hint };
  });
}

type Locator = (doc: number, path: readonly PathSegment[], at: 'key' | 'value') => { line: number; column: number };

function yamlLocator(text: string): Locator {
  const index = YamlPositions.of(text, YAML_SCHEMA);
  let lineStarts: number[] | undefined;
  return (docIndex, path, at) => {
    const offset = index?.offsetOf(docIndex, path, at);
    if (offset === undefined) return { line: 1, column: 1 };
    lineStarts ??= computeLineStarts(text);
    return positionIn(lineStarts, offset);
  };
}

function jsonLocator(text: string): Locator {
  const { docs } = readJsonStream(text);
  return (docIndex, path, at) => {
    let node: JsonNode | undefined = docs[docIndex];
    if (!node) return { line: 1, column: 1 };
    let offset = node.start;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (node.kind === 'object') {
        const k: number = node.keys!.lastIndexOf(String(seg));
        if (k < 0) break;
        if (i === path.length - 1 && at === 'key') {
          offset = node.keyStarts![k];
          break;
        }
        node = node.children![k];
      } else if (node.kind === 'array' && typeof seg === 'number') {
        node = node.children![seg];
      } else {
        break;
      }
      if (!node) break;
      offset = node.start;
    }
    return offsetToPosition(text, offset);
  };
}

/** 1-based line and column (in UTF-16 units, as editors count) of a 0-based offset. */
function offsetToPosition(text: string, offset: number): { line: number; column: number } {
  return positionIn(computeLineStarts(text), offset);
}

function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function positionIn(lineStarts: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
}

function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl < 0 ? s : s.slice(0, nl);
}
