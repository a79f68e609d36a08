/**
 * Structural validation of a document against `schemas/features.schema.json` (the one source of
 * truth, also used by editors), compiled once with ajv, and the translation of ajv's errors into
 * findings with stable rule ids and messages that name the field and the flag/segment it is in.
 */
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import type { Finding, PathSegment } from './finding.js';
import { closest, fieldLabel, label, valueAt } from './labels.js';
import { pointerToPath } from './json-pointer.js';
import type { RuleId } from './rules.js';

// Loading the schema is module loading (like an import), not I/O of the loader: the JSON sits at
// the package root both from src/state (tests) and from dist/state (the built package).
const schema = createRequire(import.meta.url)('../../schemas/features.schema.json') as Record<string, unknown>;

const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictTypes: false, strictRequired: false });
const validateDocument = ajv.compile(schema);

/** Schema findings of one (non-empty) document; empty when valid. */
export function schemaFindings(doc: unknown, docIndex: number): Finding[] {
  if (validateDocument(doc)) return [];
  const errors = validateDocument.errors ?? [];
  return mapErrors(errors, doc, docIndex);
}

function within(instancePath: string, base: string): boolean {
  return instancePath === base || instancePath.startsWith(`${base}/`);
}

function mapErrors(errors: readonly ErrorObject[], doc: unknown, docIndex: number): Finding[] {
  const dropped = new Set<ErrorObject>();
  const findings: Finding[] = [];

  // anyOf: report the branch whose type fits the data, not every branch's complaints.
  for (let n = 0; n < errors.length; n++) {
    const e = errors[n];
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    const prefix = `${e.schemaPath}/`;
    // ajv reports the failing branches' errors right before the anyOf error itself: scan back
    // (a filter over all errors would be quadratic on documents with thousands of them).
    const sub: ErrorObject[] = [];
    for (let m = n - 1; m >= 0 && errors[m].schemaPath.startsWith(prefix) && within(errors[m].instancePath, e.instancePath); m--) {
      sub.unshift(errors[m]);
    }
    dropped.add(e);
    for (const x of sub) dropped.add(x);
    const path = pointerToPath(e.instancePath);
    if (sub.length > 0 && sub.every((x) => x.keyword === 'required' && x.instancePath === e.instancePath)) {
      const names = sub.map((x) => `\`${(x.params as { missingProperty: string }).missingProperty}\``);
      findings.push(finding('schema.required', `${label(doc, path)} needs ${names.join(' or ')}`, docIndex, path, {
        hint: `add ${names.join(' or ')}`,
      }));
      continue;
    }
    if (e.keyword === 'oneOf' && sub.length === 0) {
      findings.push(finding('schema.one-of', `${label(doc, path)} matches more than one form`, docIndex, path));
      continue;
    }
    // (Branches must not use $ref: errors under a $ref carry the referenced schema's path.)
    const count = Array.isArray(e.schema) ? e.schema.length : 0;
    const branches: ErrorObject[][] = Array.from({ length: count }, () => []);
    for (const x of sub) branches[Number(x.schemaPath.slice(prefix.length).split('/')[0])]?.push(x);
    const fitting = branches.find((list) => !list.some((x) => x.keyword === 'type' && x.instancePath === e.instancePath));
    if (fitting) {
      for (const x of fitting) dropped.delete(x);
    } else {
      const types = new Set<string>();
      for (const x of sub) if (x.keyword === 'type' && x.instancePath === e.instancePath) types.add(String((x.params as { type: string }).type));
      findings.push(typeFinding(doc, docIndex, path, [...types].join(','), valueAt(doc, path)));
    }
  }

  // A wrong type makes the other complaints about the same value noise.
  const typed = new Set(errors.filter((x) => x.keyword === 'type' && !dropped.has(x)).map((x) => x.instancePath));

  for (const e of errors) {
    if (dropped.has(e)) continue;
    const path = pointerToPath(e.instancePath);
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'type':
        findings.push(typeFinding(doc, docIndex, path, String(params.type), e.data));
        break;
      case 'required': {
        const name = String(params.missingProperty);
        findings.push(finding('schema.required', `${label(doc, path)} is missing the required field \`${name}\``, docIndex, path, {
          hint: `add \`${name}\``,
        }));
        break;
      }
      case 'additionalProperties': {
        const name = String(params.additionalProperty);
        const allowed = Object.keys(((e.parentSchema ?? {}) as { properties?: object }).properties ?? {});
        const near = closest(name, allowed);
        findings.push(finding('schema.additional-property', `unknown field \`${name}\` in ${label(doc, path)}`, docIndex, [...path, name], {
          at: 'key',
          hint: `${near ? `did you mean \`${near}\`? ` : ''}allowed fields: ${allowed.join(', ')}`,
        }));
        break;
      }
      case 'enum': {
        if (typed.has(e.instancePath)) break;
        const allowed = (params.allowedValues as unknown[]).map(String);
        findings.push(finding('schema.enum', `${fieldLabel(doc, path)} must be one of ${allowed.join(', ')} (got ${show(e.data)})`, docIndex, path, {
          hint: closest(String(e.data), allowed) ? `did you mean ${closest(String(e.data), allowed)}?` : `use one of ${allowed.join(', ')}`,
        }));
        break;
      }
      case 'pattern': {
        if (typed.has(e.instancePath)) break;
        const isKey = String(params.pattern).includes('A-Za-z0-9');
        findings.push(finding('schema.pattern', isKey
          ? `${fieldLabel(doc, path)} ${show(e.data)} is not a valid key`
          : `${fieldLabel(doc, path)} must be non-empty and on one line (got ${show(e.data)})`, docIndex, path, {
          hint: isKey ? 'keys use only letters, digits, `-`, `_` and `,`' : 'write a non-empty, single-line value',
        }));
        break;
      }
      case 'minLength':
        if (typed.has(e.instancePath)) break;
        findings.push(finding('schema.min-length', `${fieldLabel(doc, path)} must not be empty`, docIndex, path, { hint: 'write a non-empty value' }));
        break;
      case 'minimum':
      case 'maximum': {
        if (typed.has(e.instancePath)) break;
        const field = path[path.length - 1];
        const rule: RuleId = field === 'rollout' ? 'distribution.rollout.range' : field === 'percentage' ? 'rollout.threshold.range' : 'schema.range';
        const what = field === 'rollout' ? 'a distribution rollout' : field === 'percentage' ? 'a threshold percentage' : fieldLabel(doc, path);
        findings.push(finding(rule, `${what} must be between 0 and 100 (got ${show(e.data)}) in ${label(doc, path.slice(0, -1))}`, docIndex, path, {
          hint: 'use a percentage from 0 to 100',
        }));
        break;
      }
      case 'not': {
        const both = ((e.schema ?? {}) as { required?: string[] }).required ?? [];
        findings.push(finding('schema.exclusive', `${label(doc, path)} has both ${both.map((b) => `\`${b}\``).join(' and ')}`, docIndex, path, {
          hint: `keep only one of ${both.map((b) => `\`${b}\``).join(', ')}`,
        }));
        break;
      }
      default:
        // A keyword the schema gains before it gets a rule id (and a case) of its own here.
        findings.push(finding('schema.invalid', `${fieldLabel(doc, path)} ${e.message ?? 'is invalid'}`, docIndex, path));
    }
  }
  return findings;
}

function finding(
  rule: RuleId,
  message: string,
  doc: number,
  path: readonly PathSegment[],
  extra: { hint?: string; at?: 'key' | 'value' } = {},
): Finding {
  return { severity: 'error', rule, message, doc, path, ...extra };
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

function typeFinding(doc: unknown, docIndex: number, path: readonly PathSegment[], expected: string, data: unknown): Finding {
  const wanted = expected.split(',').map((t) => ARTICLE[t] ?? t).join(' or ');
  const field = path[path.length - 1];
  let hint = `write ${wanted}`;
  if (field === 'value' && typeof data !== 'string' && expected === 'string') {
    hint = `constraint values are strings: quote it, e.g. value: "${typeof data === 'object' ? '...' : String(data)}"`;
  } else if (field === 'version' && typeof data === 'number') {
    hint = `quote the version: version: "${Number.isInteger(data) ? data.toFixed(1) : String(data)}"`;
  }
  const subject = path.length === 0 ? 'a document' : fieldLabel(doc, path);
  return finding('schema.type', `${subject} must be ${wanted} (got ${kindOf(data)})`, docIndex, path, { hint });
}

function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${show(v)}`;
  return `${typeof v} ${String(v)}`;
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
