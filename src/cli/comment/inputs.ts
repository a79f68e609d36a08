/**
 * What `vexil comment` reports on: the JSON the other commands wrote in the same CI job
 * (`vexil validate --format json`, `vexil test --format json`, `vexil diff --format json`), read
 * from files the job names. Each file is size-checked before it is read and its shape checked
 * before it is used (the diff against schemas/diff.schema.json, the others field by field), so a
 * step that crashed, wrote nothing or wrote something else becomes a line in the comment ("the
 * diff could not be read: ...") instead of a crash: the comment is most wanted when a step failed.
 */
import { createRequire } from 'node:module';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import type { DiffReport } from '../../diff/types.js';

/** An input file larger than this is not read (a diff of 2,000 flags with impact is ~2 MB). */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

export interface ReportedProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly rule: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly hint?: string;
}

export interface ReportedCase {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly namespace: string;
  readonly flag: string;
  readonly entity: string;
  readonly status: 'passed' | 'failed' | 'error';
  readonly message: string;
  readonly decision?: string;
}

/** A file that was named but could not be used, and why (in words for the comment). */
export interface Unreadable {
  readonly what: string;
  readonly file: string;
  readonly reason: string;
}

export interface CommentInputs {
  /** undefined: no --validate given. */
  readonly problems?: readonly ReportedProblem[];
  readonly cases?: readonly ReportedCase[];
  readonly diff?: DiffReport;
  readonly unreadable: readonly Unreadable[];
}

export interface InputFiles {
  readonly validate: readonly string[];
  readonly test: readonly string[];
  readonly diff?: string;
}

export async function readInputs(files: InputFiles, cwd: string): Promise<CommentInputs> {
  const unreadable: Unreadable[] = [];
  const read = async (what: string, file: string): Promise<unknown> => {
    try {
      return await readJson(resolve(cwd, file));
    } catch (err) {
      unreadable.push({ what, file, reason: (err as Error).message });
      return undefined;
    }
  };

  let problems: ReportedProblem[] | undefined;
  for (const file of files.validate) {
    const doc = await read('validation report', file);
    if (doc === undefined) continue;
    const list = asProblems(doc);
    if (list === undefined) unreadable.push({ what: 'validation report', file, reason: 'not the JSON of `vexil validate --format json`' });
    else problems = dedupe([...(problems ?? []), ...list]);
  }
  if (files.validate.length > 0) problems ??= [];

  let cases: ReportedCase[] | undefined;
  for (const file of files.test) {
    const doc = await read('flag test report', file);
    if (doc === undefined) continue;
    const list = asCases(doc);
    if (list === undefined) unreadable.push({ what: 'flag test report', file, reason: 'not the JSON of `vexil test --format json`' });
    else cases = [...(cases ?? []), ...list];
  }

  let diff: DiffReport | undefined;
  if (files.diff !== undefined) {
    const doc = await read('diff', files.diff);
    if (doc !== undefined) {
      if (diffValidator()(doc)) diff = doc as DiffReport;
      else unreadable.push({ what: 'diff', file: files.diff, reason: 'not the JSON of `vexil diff --format json` (schemas/diff.schema.json)' });
    }
  }
  return { ...(problems ? { problems } : {}), ...(cases ? { cases } : {}), ...(diff ? { diff } : {}), unreadable };
}

async function readJson(path: string): Promise<unknown> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile()) throw new Error('no such file (the step that writes it did not run, or failed first)');
  if (st.size > MAX_INPUT_BYTES) throw new Error(`larger than ${MAX_INPUT_BYTES} bytes`);
  if (st.size === 0) throw new Error('empty (the step that writes it failed before writing)');
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error('not JSON');
  }
}

let validator: ValidateFunction | undefined;
function diffValidator(): ValidateFunction {
  if (validator === undefined) {
    // The JSON sits at the package root from src/ and dist/ alike.
    const schema = createRequire(import.meta.url)('../../../schemas/diff.schema.json') as Record<string, unknown>;
    validator = new Ajv({ allErrors: false, strict: true }).compile(schema);
  }
  return validator;
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function asProblems(doc: unknown): ReportedProblem[] | undefined {
  if (!Array.isArray(doc)) return undefined;
  const out: ReportedProblem[] = [];
  for (const p of doc) {
    if (!isObj(p) || !isStr(p.rule) || !isStr(p.file) || !isInt(p.line) || !isInt(p.column) || !isStr(p.message)) return undefined;
    if (p.severity !== 'error' && p.severity !== 'warning' && p.severity !== 'info') return undefined;
    if (p.hint !== undefined && !isStr(p.hint)) return undefined;
    out.push({ severity: p.severity, rule: p.rule, file: p.file, line: p.line, column: p.column, message: p.message, ...(isStr(p.hint) ? { hint: p.hint } : {}) });
  }
  return out;
}

function asCases(doc: unknown): ReportedCase[] | undefined {
  if (!Array.isArray(doc)) return undefined;
  const out: ReportedCase[] = [];
  for (const c of doc) {
    if (!isObj(c) || !isStr(c.file) || !isInt(c.line) || !isStr(c.name) || !isStr(c.namespace) || !isStr(c.flag) || !isStr(c.entity) || !isStr(c.message)) return undefined;
    if (c.status !== 'passed' && c.status !== 'failed' && c.status !== 'error') return undefined;
    out.push({
      file: c.file,
      line: c.line,
      name: c.name,
      namespace: c.namespace,
      flag: c.flag,
      entity: c.entity,
      status: c.status,
      message: c.message,
      ...(isStr(c.decision) ? { decision: c.decision } : {}),
    });
  }
  return out;
}

/** The same problem reported by two runs (validate, then validate --base) is listed once. */
function dedupe(list: readonly ReportedProblem[]): ReportedProblem[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = JSON.stringify([p.severity, p.rule, p.file, p.line, p.column, p.message]);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
