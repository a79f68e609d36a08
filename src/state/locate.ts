/**
 * Positions for problems, computed only for files that have some. Findings in YAML files are
 * located by a second js-yaml pass that records node offsets (yaml-positions.ts); syntax errors
 * are listed by the `yaml` package, which reports every error, not just the first. JSON files use
 * our offset-keeping reader.
 *
 * A syntax error is placed on a token (onToken): both YAML parsers report indentation errors at
 * the start of the whitespace before the mis-indented key, and unterminated quotes or flow
 * collections at the end of the input, where an excerpt's caret would point at nothing.
 */
import { LineCounter, parseAllDocuments } from 'yaml';
import type { Finding, PathSegment } from './finding.js';
import { readJsonStream } from './json-positions.js';
import type { JsonNode } from './json-positions.js';
import { YAML_SCHEMA } from './parse.js';
import type { FileKind, SyntaxFailure } from './parse.js';
import type { RuleId } from './rules.js';
import { YamlPositions } from './yaml-positions.js';
import type { Problem } from '../model/problem.js';

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
      rule: (/duplicate/i.test(fallback.message) ? 'yaml.duplicate-key' : 'yaml.syntax') satisfies RuleId,
      file,
      ...fallbackPosition(text, fallback),
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
          const pos = lineCounter.linePos(onToken(text, err.pos[0], err.code === 'TAB_AS_INDENT'));
          problems.push({
            severity: 'error',
            rule: (err.code === 'DUPLICATE_KEY' ? 'yaml.duplicate-key' : 'yaml.syntax') satisfies RuleId,
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
  return { severity: 'error', rule: 'json.syntax' satisfies RuleId, file, line: pos.line, column: pos.column, message, hint: SYNTAX_HINT };
}

/** Attaches line/column to the findings of one file (documents numbered as js-yaml's loadAll does). */
export function locateFindings(
  file: string,
  text: string,
  kind: FileKind,
  findings: readonly Finding[],
  positions?: YamlPositions,
): Problem[] {
  if (findings.length === 0) return [];
  const locate = kind === 'yaml' ? yamlLocator(text, positions) : jsonLocator(text);
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

/** `known`: the file's index when its parse already recorded one. */
function yamlLocator(text: string, known?: YamlPositions): Locator {
  const index = known ?? YamlPositions.of(text, YAML_SCHEMA);
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

/** Characters a syntax error is moved off (onToken). */
function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d || code === 0xfeff;
}

/**
 * The offset of the token a syntax error reported at `offset` is about: `offset` itself when it is
 * on a character other than blank (space, tab, line break); when it is in a line's indentation,
 * the first character after the blanks that follow (the mis-indented key, possibly lines further
 * down); otherwise, or when only blanks follow, the last character before it that is not blank
 * (the end of what was read: an unterminated quote, flow collection or key). `keepTab`: a tab at
 * `offset` is the offending character itself (tabs used as indentation). Only a text that is
 * blank throughout keeps `offset` (clamped to the text).
 */
export function onToken(text: string, offset: number, keepTab = false): number {
  let at = Math.max(0, Math.min(offset, text.length));
  if (at < text.length && (!isBlank(text.charCodeAt(at)) || (keepTab && text.charCodeAt(at) === 0x09))) return at;
  let lineStart = at;
  while (lineStart > 0 && text.charCodeAt(lineStart - 1) !== 0x0a) lineStart--;
  let indentation = true;
  for (let i = lineStart; i < at && indentation; i++) indentation = isBlank(text.charCodeAt(i));
  if (indentation) {
    let next = at;
    while (next < text.length && isBlank(text.charCodeAt(next))) next++;
    if (next < text.length) return next;
  }
  while (at > 0 && (at >= text.length || isBlank(text.charCodeAt(at)))) at--;
  return at < text.length && !isBlank(text.charCodeAt(at)) ? at : Math.min(offset, text.length);
}

/**
 * Where js-yaml's report goes: on the token at its offset (js-yaml counts a lone CR as a line
 * break, excerpts and editors here do not, so its line is used only without an offset).
 */
function fallbackPosition(text: string, failure: SyntaxFailure): { line: number; column: number } {
  if (failure.offset === undefined) return { line: Math.max(1, failure.line), column: Math.max(1, failure.column) };
  return offsetToPosition(text, onToken(text, failure.offset));
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
