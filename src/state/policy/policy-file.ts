/**
 * Reading a policy file (`.vexil/policy.yml`) from its text: YAML parsed as state files are, the
 * document checked against schemas/policy.schema.json (ajv, as for state and config), then what
 * the schema cannot say: every rule id named under `rules` is in the catalogue, and every pattern
 * is in the linear-time subset (linear-regex.ts). `namespaces.<key>` holds metadata and key demands
 * for one namespace, merged over the top level's (demandsFor). Every problem is located (file:line:column) by
 * the same machinery as a state file's (locate.ts, yaml-positions.ts). Pure: the CLI reads the file.
 *
 * `guards` is read into typed limits (Guards); evaluating them on a change between two states is
 * the diff's job (src/diff/guards.ts), since they are checks on a semantic diff, not on one state.
 */
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject } from 'ajv';
import type { Problem } from '../../model/problem.js';
import type { Finding, PathSegment } from '../finding.js';
import { pointerToPath } from '../json-pointer.js';
import { locateFindings, yamlSyntaxProblems } from '../locate.js';
import { decodeUtf8, parseText, YAML_SCHEMA } from '../parse.js';
import { isRuleId, RULES, type RuleId, type RuleSeverity } from '../rules.js';
import { YamlPositions } from '../yaml-positions.js';
import { compileLinear, type LinearRegex } from './linear-regex.js';

const schema = createRequire(import.meta.url)('../../../schemas/policy.schema.json') as Record<string, unknown>;
const validatePolicy = new Ajv({ allErrors: true, strict: true }).compile(schema);

/** Largest policy file read (bytes): the CLI checks the size before reading. */
export const MAX_POLICY_FILE_SIZE = 256 * 1024;
/** Values a policy document may stand for once aliases are expanded. */
const MAX_POLICY_VALUES = 100_000;

/** Rules whose problems only the policy creates: their severity may be lowered like a warning's. */
const POLICY_CHECK_RULES: ReadonlySet<RuleId> = new Set([
  'policy.metadata.required', 'policy.metadata.pattern', 'policy.key.pattern',
  'guard.max-rollout-change', 'guard.protected', 'guard.max-impact-share',
]);

export type PolicySeverity = RuleSeverity | 'off';

/** What flags' metadata and flag and segment keys must be (the top level, or one namespace's). */
export interface Demands {
  readonly metadata: {
    readonly required: readonly string[];
    /** Per metadata key, the pattern its value must match. */
    readonly patterns: ReadonlyMap<string, LinearRegex>;
  };
  readonly keys: { readonly flag?: LinearRegex; readonly segment?: LinearRegex };
}

export interface Policy extends Demands {
  /** Severity per rule id, for the rules the file names. */
  readonly severities: ReadonlyMap<RuleId, PolicySeverity>;
  /** Per namespace key, its own demands as written (demandsFor merges them with the top level). */
  readonly namespaces: ReadonlyMap<string, Demands>;
  readonly timeProperties?: readonly string[];
  /** The guards on the change between a base and a head state (src/diff/guards.ts); absent without `guards`. */
  readonly guards?: Guards;
}

/** One `guards.protected` entry: a namespace, and the flags of it protected (absent: every flag). */
export interface ProtectedEntry {
  readonly namespace: string;
  readonly flags?: readonly string[];
}

/** `guards` of the policy file, typed (snake_case keys of the file, camelCase here). */
export interface Guards {
  /** Percentage points. */
  readonly maxRolloutChange?: number;
  readonly protected: readonly ProtectedEntry[];
  /** 0..1. */
  readonly maxImpactShare?: number;
}

export const EMPTY_POLICY: Policy = { severities: new Map(), metadata: { required: [], patterns: new Map() }, keys: {}, namespaces: new Map() };

/** The demands on namespace `ns`: its required keys added to the top level's, its patterns replacing those of the same key. */
export function demandsFor(policy: Policy, ns: string): Demands {
  const own = policy.namespaces.get(ns);
  if (own === undefined) return policy;
  return {
    metadata: {
      required: [...new Set([...policy.metadata.required, ...own.metadata.required])],
      patterns: new Map([...policy.metadata.patterns, ...own.metadata.patterns]),
    },
    keys: { ...policy.keys, ...own.keys },
  };
}

export type PolicyRead = { readonly policy: Policy; readonly problems: readonly [] } | { readonly problems: readonly Problem[] };

/** The policy in `bytes` (the file shown as `file`), or its located problems. */
export function readPolicy(file: string, bytes: Uint8Array): PolicyRead {
  const decoded = decodeUtf8(bytes);
  if ('failure' in decoded) {
    const f = decoded.failure;
    return { problems: [{ severity: 'error', rule: 'file.encoding', file, line: f.line, column: f.column, message: `the policy file is not valid UTF-8: ${f.message}`, hint: 'save the policy file as UTF-8' }] };
  }
  const text = decoded.text;
  const parsed = YamlPositions.parse(text, YAML_SCHEMA);
  if (parsed === undefined) {
    const failed = parseText(text, 'yaml');
    const failure = 'failure' in failed ? failed.failure : { message: 'invalid YAML', line: 1, column: 1 };
    return { problems: yamlSyntaxProblems(file, text, failure) };
  }
  const findings: Finding[] = [];
  const located = (): Problem[] => locateFindings(file, text, 'yaml', findings, parsed.positions);
  const docs = parsed.docs;
  if (docs.length > 1) {
    findings.push(invalid('a policy file holds one YAML document', 1, [], 'remove the `---` and the documents after the first'));
    return { problems: located() };
  }
  const doc = docs[0] ?? {};
  if (doc === null) return { policy: EMPTY_POLICY, problems: [] };
  if (!withinValues(doc, MAX_POLICY_VALUES)) {
    findings.push(invalid(`the policy document stands for more than ${MAX_POLICY_VALUES} values once its aliases are expanded`, 0, [], 'write the values out, or nest fewer aliases'));
    return { problems: located() };
  }
  if (!validatePolicy(doc)) {
    for (const e of validatePolicy.errors ?? []) findings.push(schemaFinding(e));
    return { problems: located() };
  }
  const raw = doc as RawPolicy;

  const severities = new Map<RuleId, PolicySeverity>();
  for (const [id, severity] of Object.entries(raw.rules ?? {})) {
    if (!isRuleId(id)) {
      findings.push({ severity: 'error', rule: 'policy.rule.unknown', doc: 0, path: ['rules', id], at: 'key',
        message: `\`rules\` names \`${id}\`, which is not a rule id of the catalogue`, hint: 'use a rule id listed in docs/errors.md (or remove the line)' });
      continue;
    }
    if (RULES[id].severity === 'error' && severity !== 'error' && !POLICY_CHECK_RULES.has(id)) {
      findings.push({ severity: 'error', rule: 'policy.invalid', doc: 0, path: ['rules', id],
        message: `\`${id}\` is an error that keeps the state from loading: its severity cannot be lowered to ${severity}`, hint: 'remove the line, and fix the state instead' });
      continue;
    }
    severities.set(id, severity);
  }
  const pattern = (source: string, path: PathSegment[], what: string): LinearRegex | undefined => {
    const compiled = compileLinear(source);
    if ('refused' in compiled) {
      findings.push({ severity: 'error', rule: 'policy.pattern.unsafe', doc: 0, path,
        message: `the pattern of ${what} is refused: ${compiled.refused}`, hint: 'write the pattern without back-references, lookahead or lookbehind (docs/cli.md, "Policy file")' });
      return undefined;
    }
    return compiled;
  };
  const demands = (raw: RawDemands, base: PathSegment[]): Demands => {
    const patterns = new Map<string, LinearRegex>();
    for (const [key, source] of Object.entries(raw.metadata?.patterns ?? {})) {
      const re = pattern(source, [...base, 'metadata', 'patterns', key], `metadata key \`${key}\``);
      if (re !== undefined) patterns.set(key, re);
    }
    const flag = raw.keys?.flag !== undefined ? pattern(raw.keys.flag, [...base, 'keys', 'flag'], 'flag keys') : undefined;
    const segment = raw.keys?.segment !== undefined ? pattern(raw.keys.segment, [...base, 'keys', 'segment'], 'segment keys') : undefined;
    return {
      metadata: { required: [...new Set(raw.metadata?.required ?? [])], patterns },
      keys: { ...(flag !== undefined ? { flag } : {}), ...(segment !== undefined ? { segment } : {}) },
    };
  };
  const top = demands(raw, []);
  const namespaces = new Map<string, Demands>();
  for (const [ns, own] of Object.entries(raw.namespaces ?? {})) namespaces.set(ns, demands(own, ['namespaces', ns]));
  if (findings.length > 0) return { problems: located() };
  return {
    policy: {
      severities,
      ...top,
      namespaces,
      ...(raw.time_properties !== undefined ? { timeProperties: raw.time_properties } : {}),
      ...(raw.guards !== undefined ? { guards: guardsOf(raw.guards) } : {}),
    },
    problems: [],
  };
}

interface RawDemands {
  metadata?: { required?: string[]; patterns?: Record<string, string> };
  keys?: { flag?: string; segment?: string };
}

interface RawPolicy extends RawDemands {
  rules?: Record<string, PolicySeverity>;
  namespaces?: Record<string, RawDemands>;
  time_properties?: string[];
  guards?: { max_rollout_change?: number; protected?: ProtectedEntry[]; max_impact_share?: number };
}

function guardsOf(raw: NonNullable<RawPolicy['guards']>): Guards {
  return {
    ...(raw.max_rollout_change !== undefined ? { maxRolloutChange: raw.max_rollout_change } : {}),
    protected: (raw.protected ?? []).map((p) => ({ namespace: p.namespace, ...(p.flags !== undefined ? { flags: [...p.flags] } : {}) })),
    ...(raw.max_impact_share !== undefined ? { maxImpactShare: raw.max_impact_share } : {}),
  };
}

function invalid(message: string, doc: number, path: PathSegment[], hint: string, at: 'key' | 'value' = 'value'): Finding {
  return { severity: 'error', rule: 'policy.invalid', doc, path, message, hint, at };
}

function where(path: readonly PathSegment[]): string {
  return path.length === 0 ? 'the policy document' : `\`${path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[')}\``;
}

function schemaFinding(e: ErrorObject): Finding {
  const path = pointerToPath(e.instancePath);
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      return invalid(`${where(path)} has the unknown key \`${name}\``, 0, [...path, name], 'remove the key or fix its name (schemas/policy.schema.json lists the keys)', 'key');
    }
    case 'type':
      return invalid(`${where(path)} must be ${article(String(params.type))}`, 0, path, `write ${article(String(params.type))}`);
    case 'enum':
      return invalid(`${where(path)} must be one of ${(params.allowedValues as unknown[]).join(', ')}`, 0, path, 'use one of the values listed');
    case 'required':
      return invalid(`${where(path)} needs \`${String(params.missingProperty)}\``, 0, path, `add \`${String(params.missingProperty)}\``);
    default:
      return invalid(`${where(path)} ${e.message ?? 'is invalid'}`, 0, path, 'fix the value (schemas/policy.schema.json)');
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Whether `value`, aliases expanded (a shared node counts each time it is reached), has at most `max` values. */
function withinValues(value: unknown, max: number): boolean {
  let budget = max;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (--budget < 0) return false;
    if (v === null || typeof v !== 'object') continue;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
  return true;
}
