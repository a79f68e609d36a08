/**
 * The checks beyond structure, over ALL documents at once (so, unlike Flipt, references resolve
 * regardless of file order): duplicates, references, version gating, flag-type misuse, ranges and
 * sums, constraint operators and values. Documents are read defensively: a document the schema
 * refused is still checked as far as its shape allows, so every problem is reported in one run.
 *
 * Severity: what would break or silently change evaluation is an error (the snapshot is refused);
 * what Flipt accepts and ignores is a warning.
 */
import { parseGoBool, parseGoFloat, parseGoTime, parseNumberArray, parseStringArray } from '../evaluation/values.js';
import type { DocFlag, DocSegment, LoadedDocument } from './document.js';
import { namespaceKeyOf } from './document.js';
import type { Finding, FindingsByFile, PathSegment } from './finding.js';
import { addFinding } from './finding.js';
import type { RuleId } from './rules.js';
import { label } from './labels.js';
import type { Severity } from '../model/problem.js';

export interface Declared<T> {
  readonly doc: LoadedDocument;
  /** Index in the document's `flags` / `segments`. */
  readonly index: number;
  readonly data: T;
}

export interface NamespaceIndex {
  readonly key: string;
  name: string;
  description: string;
  /** The file of the document that named it; undefined for the implicit `default`. */
  namedIn?: string;
  /** First declaration of each key (later duplicates are reported, not kept). */
  readonly segments: Map<string, Declared<DocSegment>>;
  readonly flags: Map<string, Declared<DocFlag>>;
}

export interface CheckResult {
  readonly namespaces: Map<string, NamespaceIndex>;
  readonly findings: FindingsByFile;
}

const VERSIONS = ['1.0', '1.1', '1.2', '1.3', '1.4'];

const STRING_OPS = ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'];
const OPERATORS: Record<string, readonly string[]> = {
  STRING_COMPARISON_TYPE: STRING_OPS,
  ENTITY_ID_COMPARISON_TYPE: STRING_OPS,
  NUMBER_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent', 'isoneof', 'isnotoneof'],
  DATETIME_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent'],
  BOOLEAN_COMPARISON_TYPE: ['true', 'false', 'present', 'notpresent'],
};
const COMPARISONS = new Set(['eq', 'neq', 'lt', 'lte', 'gt', 'gte']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const NONE: readonly unknown[] = Object.freeze([]);
const arr = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : NONE);
const has = (o: Obj, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * @param referencesComplete false when some file could not be parsed: its segments are unknown,
 *   so "unknown segment" would be noise and is not reported.
 */
export function checkDocuments(docs: readonly LoadedDocument[], referencesComplete: boolean): CheckResult {
  const namespaces = new Map<string, NamespaceIndex>();
  namespaces.set('default', { key: 'default', name: 'Default', description: '', segments: new Map(), flags: new Map() });
  const findings: FindingsByFile = new Map();
  const reporters = new Map<LoadedDocument, Report>();
  const reporter = (doc: LoadedDocument): Report => {
    let report = reporters.get(doc);
    if (!report) {
      report = (severity, rule, path, message, hint, at) => {
        const f: Finding = { severity, rule, message, hint, doc: doc.index, path, ...(at ? { at } : {}) };
        addFinding(findings, doc.file, f);
      };
      reporters.set(doc, report);
    }
    return report;
  };
  const nsOfDoc: NamespaceIndex[] = [];

  // Pass 1: register every segment and flag (all files), check what needs no other document.
  // Paths are built only when something is reported: this loop runs for every node of the state.
  docs.forEach((doc, d) => {
    const data = doc.data;
    if (!isObj(data)) return;
    const report = reporter(doc);
    const version = typeof data.version === 'string' && VERSIONS.includes(data.version) ? data.version : '1.4';
    const ns = namespaceOf(doc, data, namespaces, report);
    nsOfDoc[d] = ns;

    const segments = arr(data.segments);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (!isObj(segment)) continue;
      if (typeof segment.key === 'string') {
        const first = ns.segments.get(segment.key);
        if (first) {
          report('error', 'segment.duplicate', ['segments', i, 'key'],
            `segment \`${segment.key}\` is defined twice in namespace \`${ns.key}\` (first in ${first.doc.file})`,
            'segment keys are unique per namespace: rename or remove one of them');
        } else {
          ns.segments.set(segment.key, { doc, index: i, data: segment as unknown as DocSegment });
        }
      }
      const constraints = arr(segment.constraints);
      for (let j = 0; j < constraints.length; j++) {
        const c = constraints[j];
        if (isObj(c)) checkConstraint(data, c, i, j, report);
      }
    }

    const flags = arr(data.flags);
    for (let i = 0; i < flags.length; i++) {
      const flag = flags[i];
      if (!isObj(flag)) continue;
      if (typeof flag.key === 'string') {
        const first = ns.flags.get(flag.key);
        if (first) {
          report('error', 'flag.duplicate', ['flags', i, 'key'],
            `flag \`${flag.key}\` is defined twice in namespace \`${ns.key}\` (first in ${first.doc.file})`,
            'flag keys are unique per namespace: rename or remove one of them');
        } else {
          ns.flags.set(flag.key, { doc, index: i, data: flag as unknown as DocFlag });
        }
      }
      checkFlag(data, flag, i, version, report);
    }
  });

  // Pass 2: segment references, now that every file's segments are known.
  if (referencesComplete) {
    docs.forEach((doc, d) => {
      const data = doc.data;
      if (!isObj(data)) return;
      checkSegmentReferences(data, nsOfDoc[d], reporter(doc));
    });
  }
  return { namespaces, findings };
}

function checkSegmentReferences(data: Obj, ns: NamespaceIndex, report: Report): void {
  const unknown = (kind: 'rule' | 'rollout', key: string, path: PathSegment[]) => {
    report('error', `${kind}.segment.unknown`, path,
      `${label(data, path.slice(0, 4))} references unknown segment \`${key}\` in namespace \`${ns.key}\``,
      `define segment \`${key}\` in namespace \`${ns.key}\` (in any file) or fix the key`);
  };
  const flags = arr(data.flags);
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i];
    if (!isObj(flag)) continue;
    const rules = arr(flag.rules);
    for (let r = 0; r < rules.length; r++) {
      const rule = rules[r];
      if (!isObj(rule)) continue;
      const segment = rule.segment;
      if (typeof segment === 'string') {
        if (!ns.segments.has(segment)) unknown('rule', segment, ['flags', i, 'rules', r, 'segment']);
      } else if (isObj(segment)) {
        const keys = arr(segment.keys);
        for (let k = 0; k < keys.length; k++) {
          const key = keys[k];
          if (typeof key === 'string' && !ns.segments.has(key)) unknown('rule', key, ['flags', i, 'rules', r, 'segment', 'keys', k]);
        }
      }
    }
    const rollouts = arr(flag.rollouts);
    for (let r = 0; r < rollouts.length; r++) {
      const rollout = rollouts[r];
      if (!isObj(rollout) || !isObj(rollout.segment)) continue;
      const seg = rollout.segment;
      if (typeof seg.key === 'string' && !ns.segments.has(seg.key)) {
        unknown('rollout', seg.key, ['flags', i, 'rollouts', r, 'segment', 'key']);
      }
      const keys = arr(seg.keys);
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k];
        if (typeof key === 'string' && !ns.segments.has(key)) unknown('rollout', key, ['flags', i, 'rollouts', r, 'segment', 'keys', k]);
      }
    }
  }
}

type Report = (severity: Severity, rule: RuleId, path: readonly PathSegment[], message: string, hint: string, at?: 'key') => void;

function namespaceOf(doc: LoadedDocument, data: Obj, namespaces: Map<string, NamespaceIndex>, report: Report): NamespaceIndex {
  const key = namespaceKeyOf(data);
  const raw = data.namespace;
  const objectForm = isObj(raw);
  const keyMissing = objectForm && !has(raw, 'key');
  if (keyMissing) {
    report('warning', 'namespace.key.missing', ['namespace'], 'the namespace object has no `key`: the document goes to namespace `default`',
      'add `key:` to the namespace (or write the namespace as a plain key)');
  }
  let ns = namespaces.get(key);
  if (!ns) {
    ns = {
      key,
      name: objectForm ? (typeof raw.name === 'string' ? raw.name : '') : key,
      description: objectForm && typeof raw.description === 'string' ? raw.description : '',
      namedIn: doc.file,
      segments: new Map(),
      flags: new Map(),
    };
    namespaces.set(key, ns);
  } else if (objectForm && !keyMissing) {
    const name = typeof raw.name === 'string' ? raw.name : undefined;
    const description = typeof raw.description === 'string' ? raw.description : undefined;
    if ((name !== undefined && name !== ns.name) || (description !== undefined && description !== ns.description)) {
      report('warning', 'namespace.redefined', ['namespace'],
        `namespace \`${key}\` already has its name and description${ns.namedIn ? ` from ${ns.namedIn}` : ' (built in)'}; the ones given here are ignored`,
        'give the name and description in one document only');
    }
  }
  return ns;
}

function gate(report: Report, version: string, field: string, min: string, path: readonly PathSegment[]): void {
  if (version < min) {
    report('error', 'version.unsupported', path,
      `\`${field}\` needs document version ${min} or later; this document is version ${version}`,
      `set version: "${min}" (or later) at the top of the document, or remove \`${field}\``, 'key');
  }
}

// No closures in here: this runs for every flag of the state (and tsx wraps each closure).
function checkFlag(data: Obj, flag: Obj, i: number, version: string, report: Report): void {
  if (version < '1.3') {
    if (has(flag, 'type')) gate(report, version, 'type', '1.1', ['flags', i, 'type']);
    if (has(flag, 'rollouts')) gate(report, version, 'rollouts', '1.1', ['flags', i, 'rollouts']);
    if (has(flag, 'metadata')) gate(report, version, 'metadata', '1.3', ['flags', i, 'metadata']);
  }

  const isBoolean = flag.type === 'BOOLEAN_FLAG_TYPE';
  const variants = arr(flag.variants);
  // Flags have a handful of variants: scans of the list, not a Set per flag.
  let defaults = 0;
  for (let j = 0; j < variants.length; j++) {
    const v = variants[j];
    if (!isObj(v)) continue;
    if (typeof v.key === 'string' && indexOfVariant(variants, v.key) < j) {
      report('error', 'variant.duplicate', ['flags', i, 'variants', j, 'key'], `variant \`${v.key}\` is defined twice in ${label(data, ['flags', i])}`,
        'variant keys are unique per flag: rename or remove one of them');
    }
    if (version < '1.3' && has(v, 'default')) gate(report, version, 'default', '1.3', ['flags', i, 'variants', j, 'default']);
    if (v.default === true && ++defaults > 1) {
      report('error', 'flag.default-variant.multiple', ['flags', i, 'variants', j, 'default'],
        `${label(data, ['flags', i])} marks more than one variant as default`, 'keep `default: true` on one variant only', 'key');
    }
  }
  if (isBoolean && variants.length > 0) {
    report('warning', 'flag.variants-on-boolean', ['flags', i, 'variants'],
      `${label(data, ['flags', i])} is a boolean flag: its variants are ignored by evaluation`, 'remove `variants` or make it a VARIANT_FLAG_TYPE flag', 'key');
  }

  const rules = arr(flag.rules);
  if (isBoolean && rules.length > 0) {
    report('warning', 'flag.rules-on-boolean', ['flags', i, 'rules'],
      `${label(data, ['flags', i])} is a boolean flag: its rules are ignored by evaluation (boolean flags use rollouts)`,
      'move the logic into `rollouts`, or remove `rules`', 'key');
  }
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    if (!isObj(rule)) continue;
    if (has(rule, 'rank')) {
      report('warning', 'rule.rank.ignored', ['flags', i, 'rules', r, 'rank'],
        `\`rank\` of ${label(data, ['flags', i, 'rules', r])} is ignored: a rule's rank is its position in \`rules\``,
        'remove `rank` and order the rules instead', 'key');
    }
    const segment = rule.segment;
    if (isObj(segment) && Array.isArray(segment.keys) && segment.keys.length === 0) {
      emptySegments(report, data, ['flags', i, 'rules', r], segment.operator);
    }
    let sum = 0;
    let inRange = true;
    const distributions = arr(rule.distributions);
    for (let n = 0; n < distributions.length; n++) {
      const d = distributions[n];
      if (!isObj(d)) continue;
      if (typeof d.variant === 'string' && indexOfVariant(variants, d.variant) < 0) {
        const keys = variantKeysOf(variants);
        report('error', 'distribution.variant.unknown', ['flags', i, 'rules', r, 'distributions', n, 'variant'],
          `distribution ${n + 1} of ${label(data, ['flags', i, 'rules', r])} references unknown variant \`${d.variant}\``,
          keys.length > 0 ? `use one of the flag's variants: ${keys.join(', ')}` : 'declare the variant under the flag\'s `variants`');
      }
      if (typeof d.rollout === 'number') {
        if (d.rollout > 0) sum += d.rollout;
        if (!(d.rollout >= 0 && d.rollout <= 100)) inRange = false;
      }
    }
    // A rollout out of 0..100 is reported by itself (schema); its sum would only repeat it.
    // Tolerance: 33.33 + 33.33 + 33.34 is 100.00000000000001 in binary floating point.
    if (inRange && sum > 100 + 1e-9) {
      report('error', 'rule.distributions.sum', ['flags', i, 'rules', r, 'distributions'],
        `the distributions of ${label(data, ['flags', i, 'rules', r])} add up to ${Math.round(sum * 1e6) / 1e6}%, more than 100%`,
        'lower the rollouts so that they sum to at most 100', 'key');
    }
  }

  const rollouts = arr(flag.rollouts);
  if (!isBoolean && rollouts.length > 0) {
    report('error', 'flag.rollouts-on-variant', ['flags', i, 'rollouts'],
      `${label(data, ['flags', i])} is a variant flag: rollouts apply only to boolean flags`,
      'set `type: BOOLEAN_FLAG_TYPE` (version 1.1 or later) or use `rules` with distributions', 'key');
  }
  for (let r = 0; r < rollouts.length; r++) {
    const rollout = rollouts[r];
    if (!isObj(rollout) || !isObj(rollout.segment)) continue;
    const seg = rollout.segment;
    if (Array.isArray(seg.keys) && seg.keys.length === 0 && !has(seg, 'key')) {
      emptySegments(report, data, ['flags', i, 'rollouts', r], seg.operator);
    }
  }
}

/** Index of the first variant with this (string) key; -1 when none. */
function indexOfVariant(variants: readonly unknown[], key: string): number {
  for (let j = 0; j < variants.length; j++) {
    const v = variants[j];
    if (isObj(v) && v.key === key) return j;
  }
  return -1;
}

/** The distinct string keys of the variants, in declared order. */
function variantKeysOf(variants: readonly unknown[]): string[] {
  const keys: string[] = [];
  for (const v of variants) if (isObj(v) && typeof v.key === 'string' && !keys.includes(v.key)) keys.push(v.key);
  return keys;
}

function emptySegments(report: Report, data: Obj, ownerPath: readonly PathSegment[], operator: unknown): void {
  const and = operator === 'AND_SEGMENT_OPERATOR';
  report('warning', `${ownerPath[ownerPath.length - 2] === 'rules' ? 'rule' : 'rollout'}.segment.empty`, [...ownerPath, 'segment', 'keys'],
    `${label(data, ownerPath)} lists no segments: it ${and ? 'matches every entity (AND of nothing)' : 'never matches (OR of nothing)'}`,
    'list at least one segment key', 'key');
}

function checkConstraint(data: Obj, c: Obj, i: number, j: number, report: Report): void {
  const type = c.type;
  const op = c.operator;
  if (typeof type !== 'string' || typeof op !== 'string') return;
  const allowed = OPERATORS[type];
  if (!allowed) return; // unknown type: the schema reports it
  // Paths and words only when reporting, no closures: this runs for every constraint of the state.
  if (op === 'le' && (type === 'NUMBER_COMPARISON_TYPE' || type === 'DATETIME_COMPARISON_TYPE')) {
    report('warning', 'constraint.operator.le', [...constraintAt(i, j), 'operator'],
      `operator \`le\` of ${label(data, constraintAt(i, j))} never matches: Flipt v1 accepts it but evaluates no such operator`, 'use lt or lte');
    return;
  }
  if (!allowed.includes(op)) {
    report('error', 'constraint.operator.invalid', [...constraintAt(i, j), 'operator'],
      `operator \`${op}\` is not valid for ${type} (${label(data, constraintAt(i, j))})`, `use one of: ${allowed.join(', ')}`);
    return;
  }
  if (c.value !== undefined && typeof c.value !== 'string') return; // the schema reports the type
  const value = c.value ?? '';
  if (type === 'NUMBER_COMPARISON_TYPE' && COMPARISONS.has(op)) {
    if (parseGoFloat(value) === undefined) {
      report('error', 'constraint.value.number', [...constraintAt(i, j), 'value'],
        value === '' ? `${label(data, constraintAt(i, j))} compares with \`${op}\` but has no value` : `value ${JSON.stringify(value)} of ${label(data, constraintAt(i, j))} is not a number`,
        'write a number as a string, e.g. value: "42" or value: "3.5"');
    }
  } else if (type === 'DATETIME_COMPARISON_TYPE' && COMPARISONS.has(op)) {
    if (parseGoTime(value) === undefined) {
      report('error', 'constraint.value.datetime', [...constraintAt(i, j), 'value'],
        value === '' ? `${label(data, constraintAt(i, j))} compares with \`${op}\` but has no value` : `value ${JSON.stringify(value)} of ${label(data, constraintAt(i, j))} is not a date-time`,
        'write an RFC 3339 date-time such as "2025-01-31T12:00:00Z" or a date such as "2025-01-31"');
    }
  } else if (op === 'isoneof' || op === 'isnotoneof') {
    const numbers = type === 'NUMBER_COMPARISON_TYPE';
    if ((numbers ? parseNumberArray(value) : parseStringArray(value)) === undefined) {
      report('error', 'constraint.value.array', [...constraintAt(i, j), 'value'],
        `value ${JSON.stringify(value)} of ${label(data, constraintAt(i, j))} is not a JSON array of ${numbers ? 'numbers' : 'strings'}`,
        numbers ? 'write a JSON array in a string, e.g. value: "[1, 2.5]"' : 'write a JSON array in a string, e.g. value: \'["a", "b"]\'');
    }
  } else if (type === 'BOOLEAN_COMPARISON_TYPE' && value !== '' && parseGoBool(value) === undefined) {
    report('warning', 'constraint.value.boolean', [...constraintAt(i, j), 'value'],
      `value ${JSON.stringify(value)} of ${label(data, constraintAt(i, j))} is ignored: for boolean constraints the operator (true/false) decides`,
      'remove `value`');
  }
}

function constraintAt(i: number, j: number): PathSegment[] {
  return ['segments', i, 'constraints', j];
}

