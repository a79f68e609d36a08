/**
 * A flag test file's text → its cases, each with the line it starts on, and located problems.
 * Parsed with the `yaml` package for node positions (test files are small; state files use the
 * fast parser). The structure is checked against schemas/flag-tests.schema.json, the same schema
 * editors use; a case with a problem is reported and not run, the other cases still run.
 */
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node, type Pair } from 'yaml';
import type { EvaluationReason } from '../../model/evaluation-result.js';
import type { Problem } from '../../model/problem.js';
import type { Expectation, TestCase } from './test-case.js';
import { pointerToPath } from '../json-pointer.js';
import type { RuleId } from '../rules.js';

// Module loading, as for the state schema: the JSON sits at the package root from src/ and dist/.
// Compiled on the first test file read, not at import: `vexil serve` imports this module through
// the store, and most states have no test files (compiling costs about 30 ms of every start).
let validator: ValidateFunction | undefined;
function validateFile(): ValidateFunction {
  if (validator === undefined) {
    const schema = createRequire(import.meta.url)('../../../schemas/flag-tests.schema.json') as Record<string, unknown>;
    validator = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true }).compile(schema);
  }
  return validator;
}

export interface ReadTestFileOptions {
  /** The index file: only its `tests` key is read; its other keys belong to the index. */
  readonly section?: boolean;
}

export interface TestFileContent {
  readonly cases: TestCase[];
  readonly problems: Problem[];
}

type PathPart = string | number;

export function readTestFile(file: string, text: string, opts: ReadTestFileOptions = {}): TestFileContent {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  const at = (offset: number): { line: number; column: number } => {
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const problem = (rule: RuleId, message: string, offset: number, hint?: string): Problem => ({
    severity: 'error',
    rule,
    file,
    ...at(offset),
    message,
    ...(hint !== undefined ? { hint } : {}),
  });

  if (doc.errors.length > 0) {
    return {
      cases: [],
      problems: doc.errors.map((e) => ({
        severity: 'error' as const,
        rule: 'flag-test.syntax' satisfies RuleId,
        file,
        line: e.linePos?.[0]?.line ?? 1,
        column: e.linePos?.[0]?.col ?? 1,
        message: firstLine(e.message),
      })),
    };
  }

  const root = doc.contents;
  if (opts.section) {
    if (!isMap(root) || !root.has('tests')) return { cases: [], problems: [] };
  } else if (root === null || (isScalar(root) && (root.value === null || root.value === undefined))) {
    return { cases: [], problems: [problem('flag-test.empty', 'the test file is empty', 0, 'add a `tests:` list of cases')] };
  }

  const data: unknown = opts.section ? { tests: (doc.toJS() as Record<string, unknown>).tests } : doc.toJS();
  const problems: Problem[] = [];
  /** Cases (by index) that have a problem: reported, not run. */
  const broken = new Set<number>();
  let fileBroken = false;
  const validate = validateFile();
  if (!validate(data)) {
    for (const e of validate.errors ?? []) {
      const path = pointerToPath(e.instancePath);
      if (path[0] === 'tests' && typeof path[1] === 'number') broken.add(path[1]);
      else fileBroken = true;
      const { message, hint, offset } = describe(e, path, doc);
      problems.push(problem(`flag-test.${ruleOf(e)}`, message, offset, hint));
    }
  }
  if (fileBroken) return { cases: [], problems: dedupe(problems) };

  const fileNamespace = isMap(root) && !opts.section ? text_(root.get('namespace', true)) : undefined;
  const tests = isMap(root) ? root.get('tests', true) : undefined;
  const cases: TestCase[] = [];
  if (isSeq(tests)) {
    tests.items.forEach((item, index) => {
      if (broken.has(index) || !isMap(item)) return;
      const flag = text_(item.get('flag', true)) ?? '';
      const entity = text_(item.get('entity', true)) ?? '';
      const start = at(item.range?.[0] ?? 0);
      cases.push({
        file,
        line: start.line,
        column: start.column,
        index,
        name: text_(item.get('name', true)) ?? `${flag} for ${JSON.stringify(entity)}`,
        namespace: text_(item.get('namespace', true)) ?? fileNamespace ?? 'default',
        flag,
        entity,
        context: contextOf(item.get('context', true)),
        expect: expectationOf(item.get('expect', true)),
      });
    });
  }
  return { cases, problems: dedupe(problems) };
}

/** A scalar as the text written: strings as they are, `250` as "250", `~` or nothing as undefined. */
function text_(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  const v = node.value;
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v;
  return typeof node.source === 'string' && node.source !== '' ? node.source : String(v);
}

function contextOf(node: unknown): Record<string, string> {
  // Null prototype, as the server builds contexts: `constructor` must read as absent.
  const out = Object.create(null) as Record<string, string>;
  if (!isMap(node)) return out;
  for (const pair of node.items as Pair[]) {
    const key = text_(pair.key);
    if (key === undefined) continue;
    out[key] = text_(pair.value) ?? '';
  }
  return out;
}

function expectationOf(node: unknown): Expectation {
  const out: { -readonly [K in keyof Expectation]: Expectation[K] } = {};
  if (!isMap(node)) return out;
  const variant = node.get('variant', true);
  if (variant !== undefined) out.variant = text_(variant) ?? '';
  const match = node.get('match');
  if (typeof match === 'boolean') out.match = match;
  const enabled = node.get('enabled');
  if (typeof enabled === 'boolean') out.enabled = enabled;
  const reason = node.get('reason');
  if (typeof reason === 'string') out.reason = longReason(reason);
  const segments = node.get('segments', true);
  if (isSeq(segments)) out.segments = segments.items.map((s) => text_(s) ?? '');
  if (node.has('attachment')) {
    const a = node.get('attachment', true) as Node | null | undefined;
    out.attachment = a === null || a === undefined ? null : (a.toJSON() as unknown);
  }
  return out;
}

/** `MATCH` → `MATCH_EVALUATION_REASON`; the long form as is. */
export function longReason(reason: string): EvaluationReason {
  return (reason.endsWith('_EVALUATION_REASON') ? reason : `${reason}_EVALUATION_REASON`) as EvaluationReason;
}

// ----- schema errors → located problems ------------------------------------------------------------

/** The rule of a schema error: `flag-test.` and this. */
function ruleOf(e: ErrorObject): 'required' | 'unknown-key' | 'enum' | 'empty-expect' | 'expect-conflict' | 'duplicate' | 'type' {
  switch (e.keyword) {
    case 'required':
      return 'required';
    case 'additionalProperties':
      return 'unknown-key';
    case 'enum':
      return 'enum';
    case 'minProperties':
      return 'empty-expect';
    case 'not':
      return 'expect-conflict';
    case 'uniqueItems':
      return 'duplicate';
    default:
      return 'type';
  }
}

function describe(e: ErrorObject, path: PathPart[], doc: Document): { message: string; hint?: string; offset: number } {
  const where = placeOf(path);
  const node = doc.getIn(path, true) as Node | undefined;
  const offset = node?.range?.[0] ?? parentOffset(doc, path);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const hint =
        missing === 'expect'
          ? 'add e.g. `expect: { variant: blue }` (variant flags) or `expect: { enabled: true }` (boolean flags)'
          : missing === 'tests'
            ? 'add a `tests:` list of cases'
            : undefined;
      return { message: `${where} is missing \`${missing}\``, offset, ...(hint !== undefined ? { hint } : {}) };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const keyNode = findKey(doc, path, key);
      const allowed = allowedKeys(path);
      return {
        message: `unknown key \`${key}\` in ${where}`,
        offset: keyNode ?? offset,
        hint: `the keys of ${where} are ${allowed}`,
      };
    }
    case 'enum':
      return {
        message: `${where} must be one of MATCH, DEFAULT, FLAG_DISABLED, UNKNOWN (or the long form, e.g. MATCH_EVALUATION_REASON)`,
        offset,
      };
    case 'minProperties':
      return { message: `${where} is empty: nothing would be checked`, offset, hint: 'give at least one of variant, match, enabled, reason, segments, attachment' };
    case 'not':
      return {
        message: `${where} mixes \`enabled\` (boolean flags) with \`variant\`, \`match\` or \`attachment\` (variant flags)`,
        offset,
        hint: 'a flag is either a variant flag or a boolean flag; keep the fields of its type',
      };
    case 'uniqueItems':
      return { message: `${where} lists a segment twice`, offset };
    case 'type':
      return { message: `${where} must be ${typeWords(params.type)}`, offset };
    default:
      return { message: `${where} ${e.message ?? 'is invalid'}`, offset };
  }
}

function typeWords(type: unknown): string {
  const list = (Array.isArray(type) ? type : String(type).split(',')).map(String);
  if (list.includes('string')) return 'a string';
  if (list.length === 1 && list[0] === 'boolean') return 'true or false';
  if (list.length === 1 && list[0] === 'object') return 'a mapping';
  if (list.length === 1 && list[0] === 'array') return 'a list';
  return list.join(' or ');
}

function allowedKeys(path: PathPart[]): string {
  if (path.length === 0) return '`namespace` and `tests`';
  if (path.at(-1) === 'expect') return '`variant`, `match`, `enabled`, `reason`, `segments`, `attachment`';
  return '`name`, `namespace`, `flag`, `entity`, `context`, `expect`';
}

/** `case 3 (`expect.variant`)`, `the test file`, ... for messages. */
function placeOf(path: PathPart[]): string {
  if (path.length === 0) return 'the test file';
  if (path[0] !== 'tests') return `\`${path.join('.')}\``;
  if (path.length === 1) return '`tests`';
  const n = typeof path[1] === 'number' ? path[1] + 1 : path[1];
  if (path.length === 2) return `case ${n}`;
  return `\`${path.slice(2).join('.')}\` of case ${n}`;
}

function findKey(doc: Document, path: PathPart[], key: string): number | undefined {
  const parent = path.length === 0 ? doc.contents : doc.getIn(path, true);
  if (!isMap(parent)) return undefined;
  for (const pair of parent.items as Pair[]) {
    if (isScalar(pair.key) && String(pair.key.value) === key) return pair.key.range?.[0];
  }
  return undefined;
}

function parentOffset(doc: Document, path: PathPart[]): number {
  for (let n = path.length - 1; n >= 0; n--) {
    const node = (n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true)) as Node | null | undefined;
    if (node?.range) return node.range[0];
  }
  return 0;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems
    .filter((p) => {
      const k = `${p.line}:${p.column}:${p.message}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/** The message without the position and excerpt the yaml package appends (the problem has them). */
function firstLine(s: string): string {
  return (s.split('\n')[0] ?? s).replace(/ at line \d+, column \d+:?$/, '');
}
