/**
 * One case against one snapshot: the evaluators give the result (the same code the server runs),
 * the explain trace says how it was reached, and each expectation given is compared.
 */
import { isDeepStrictEqual } from 'node:util';
import { VexilError } from '../../errors.js';
import { explain } from '../../evaluation/explain.js';
import { evaluateBoolean, evaluateVariant, findFlag } from '../../evaluation/index.js';
import type { EvaluationRequest } from '../../model/evaluation-request.js';
import type { Snapshot } from '../../model/snapshot.js';
import type { Actual, CaseResult, Expectation, Mismatch, TestCase } from './types.js';

const VARIANT_ONLY = ['variant', 'match', 'attachment'] as const;

export function runCase(snapshot: Snapshot, c: TestCase): CaseResult {
  const started = process.hrtime.bigint();
  const done = (r: Omit<CaseResult, 'durationMs' | 'case'>): CaseResult => ({
    case: c,
    ...r,
    durationMs: Number(process.hrtime.bigint() - started) / 1e6,
  });
  const req: EvaluationRequest = { namespaceKey: c.namespace, flagKey: c.flag, entityId: c.entity, context: c.context };

  try {
    return done(evaluateCase(snapshot, c, req));
  } catch (err) {
    // Namespace or flag not found (the API's message), or a flag Flipt could not evaluate either.
    if (!(err instanceof VexilError)) throw err;
    return done({ status: 'failed', mismatches: [], message: err.message });
  }
}

function evaluateCase(snapshot: Snapshot, c: TestCase, req: EvaluationRequest): Omit<CaseResult, 'durationMs' | 'case'> {
  const flag = findFlag(snapshot, req.namespaceKey, req.flagKey);
  const isVariant = flag.compiled.variant !== null;
  const wrongFields = isVariant
    ? (['enabled'] as const).filter((k) => c.expect[k] !== undefined)
    : VARIANT_ONLY.filter((k) => c.expect[k] !== undefined);
  const explanation = explain(snapshot, req);
  let actual: Actual;
  if (isVariant) {
    const r = evaluateVariant(snapshot, req);
    actual = {
      type: 'variant',
      variant: r.variantKey,
      match: r.match,
      reason: r.reason,
      segments: [...r.segmentKeys],
      attachment: parseAttachment(r.variantAttachment),
    };
  } else {
    const r = evaluateBoolean(snapshot, req);
    actual = { type: 'boolean', enabled: r.enabled, reason: r.reason, segments: [...r.segmentKeys] };
  }

  if (wrongFields.length > 0) {
    const given = wrongFields.map((k) => `\`${k}\``).join(', ');
    const kind = isVariant ? 'a variant flag (expect variant, match, reason, segments, attachment)' : 'a boolean flag (expect enabled, reason, segments)';
    return {
      status: 'failed',
      actual,
      explanation,
      mismatches: [],
      message: `${given} cannot be checked: ${explanation.namespaceKey}/${flag.key} is ${kind}`,
    };
  }

  const mismatches = compare(c.expect, actual);
  return {
    status: mismatches.length === 0 ? 'passed' : 'failed',
    actual,
    explanation,
    mismatches,
    message: mismatches.map(describeMismatch).join('; '),
  };
}

function compare(expect: Expectation, actual: Actual): Mismatch[] {
  const out: Mismatch[] = [];
  const check = (field: keyof Expectation, got: unknown, same: (a: unknown, b: unknown) => boolean = Object.is) => {
    const want = expect[field];
    if (want !== undefined && !same(want, got)) out.push({ field, expected: want, actual: got });
  };
  if (actual.type === 'variant') {
    check('variant', actual.variant);
    check('match', actual.match);
  } else {
    check('enabled', actual.enabled);
  }
  check('reason', actual.reason);
  // Flipt returns segmentKeys in no particular order; vexil's is deterministic, but a test should not depend on it.
  check('segments', actual.segments, (a, b) => isDeepStrictEqual([...(a as string[])].sort(), [...(b as string[])].sort()));
  if (actual.type === 'variant' && expect.attachment !== undefined) check('attachment', actual.attachment, isDeepStrictEqual);
  return out;
}

/** The attachment as data; null when there is none ("" or "null"). */
function parseAttachment(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function describeMismatch(m: Mismatch): string {
  return `${m.field}: expected ${show(m.expected)}, got ${show(m.actual)}`;
}

export function show(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (typeof v === 'string') return v === '' ? '""' : /^[-_,.:@A-Za-z0-9]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}
