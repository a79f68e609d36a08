/**
 * Generated matchers: each hot flag's whole decision (rules or rollouts, segments, constraints,
 * bucket bounds, precomputed results) becomes one JavaScript function built with `new Function`,
 * the way flagd's json-logic engine compiles its rules. The interpreter (constraints.ts +
 * variant.ts / boolean.ts) pays per call for what is fixed per flag: the walk over arrays of
 * compiled objects, the opcode switch, reading the same context property and parsing the same
 * number once per constraint. The generated code reads each property once, parses it once per
 * type, and carries operators and operands as code. Measured on the bench's scenario (d)
 * (5 rules × 3 segments × 4 constraints): about 0.4M → 3M evaluations/s.
 *
 * Decisions are identical to the interpreter's by construction (each operator below mirrors
 * matchConstraint case by case, anything else calls the interpreter) and by test
 * (test/evaluation/codegen.test.ts runs both over random states).
 *
 * Security: state files are untrusted. Nothing from the state is pasted into the source as code:
 * a string appears only as a JSON.stringify'd literal (`literal`), other values (Sets, results,
 * compiled objects, non-finite numbers) only as a slot of the constants array, and finite numbers
 * via String(number). Identifiers are all generated here (`s3`, `k12`...).
 *
 * When code generation is not allowed (`node --disallow-code-generation-from-strings`, a locked
 * down runtime) `CODEGEN_AVAILABLE` is false and the evaluators keep interpreting.
 */
import type {
  CompiledBooleanFlag,
  CompiledConstraint,
  CompiledFlag,
  CompiledRule,
  CompiledSegment,
  CompiledSegmentSet,
  CompiledVariantFlag,
  GeneratedMatcher,
} from '../model/compiled.js';
import type { EvaluationContext } from '../model/evaluation-request.js';
import type { BooleanResult, VariantResult } from '../model/evaluation-result.js';
import { hasTrimmedPrefix, hasTrimmedSuffix, isGoBlank, matchConstraint, matchSegmentSet } from './constraints.js';
import { decideRule } from './decide.js';
import { thresholdValue, variantBucket } from './hash.js';
import {
  OP_BLANK,
  OP_BOOL_FALSE,
  OP_BOOL_TRUE,
  OP_NEVER,
  OP_NOT_BLANK,
  OP_NUM_EQ,
  OP_NUM_GT,
  OP_NUM_GTE,
  OP_NUM_LT,
  OP_NUM_LTE,
  OP_NUM_NEQ,
  OP_NUM_NOTONEOF,
  OP_NUM_ONEOF,
  OP_STR_CONTAINS,
  OP_STR_EQ,
  OP_STR_NEQ,
  OP_STR_NOTCONTAINS,
  OP_STR_NOTONEOF,
  OP_STR_ONEOF,
  OP_STR_PREFIX,
  OP_STR_SUFFIX,
  OP_TIME_EQ,
  OP_TIME_GT,
  OP_TIME_GTE,
  OP_TIME_LT,
  OP_TIME_LTE,
  OP_TIME_NEQ,
  ROLLOUT_SEGMENT,
  ROLLOUT_THRESHOLD,
} from './opcodes.js';
import { booleanResult } from './results.js';
import { parseGoBool, parseGoFloat, parseGoTime, type Instant } from './values.js';

/** Whether this runtime lets us build functions from source; decided once. */
export const CODEGEN_AVAILABLE: boolean = (() => {
  try {
    return (new Function('return 1') as () => number)() === 1;
  } catch {
    return false;
  }
})();

/** OR sets up to this many segments track their matches in an int bitmask; larger ones call the interpreter. */
const MAX_MASK_SEGMENTS = 30;
/** Beyond this much source V8 would not optimize the function anyway: keep interpreting. */
const MAX_SOURCE_LENGTH = 256 * 1024;

/**
 * Generates the flag's matcher into its cell (model/compiled.ts MatcherCell), unless that was already
 * tried; afterwards its evaluations run the generated code. Pure computation, no I/O; the caller
 * decides when (the store: in the background after a snapshot is swapped in, never on a request).
 * Returns whether it did the work (false: tried before).
 */
export function prepareMatcher(flag: CompiledFlag): boolean {
  if (flag.variant !== null) {
    const cell = flag.variant.matcher;
    if (cell.tried) return false;
    cell.tried = true;
    cell.fn = generateVariantMatcher(flag, flag.variant);
    return true;
  }
  const cell = flag.boolean!.matcher;
  if (cell.tried) return false;
  cell.tried = true;
  cell.fn = generateBooleanMatcher(flag, flag.boolean!);
  return true;
}

/** A generated function for the variant flag, or null (code generation unavailable or not worth it). */
export function generateVariantMatcher(flag: CompiledFlag, v: CompiledVariantFlag): GeneratedMatcher<VariantResult> | null {
  // A disabled flag answers without matching (runVariant): nothing to generate.
  if (!CODEGEN_AVAILABLE || v.noMatch === null) return null;
  const g = new Generator();
  for (const rule of v.rules) {
    g.set(rule, {
      all: allMatchedVariant(g, flag, rule),
      partial: (keys) => `D(${g.constant(flag)}, ${g.constant(v)}, ${g.constant(rule)}, e, ${keys})`,
    });
  }
  return g.finish(`return ${g.constant(v.noMatch)};`);
}

/** A generated function for the boolean flag, or null. */
export function generateBooleanMatcher(flag: CompiledFlag, b: CompiledBooleanFlag): GeneratedMatcher<BooleanResult> | null {
  if (!CODEGEN_AVAILABLE) return null;
  const g = new Generator();
  const key = g.constant(flag.key);
  let hashed = false;
  for (const rollout of b.rollouts) {
    const result = g.constant(rollout.result);
    if (rollout.kind === ROLLOUT_THRESHOLD) {
      // Straight-line code: the first threshold in the source is the first one reached.
      if (!hashed) g.statement(`const n = T(e, ${key});`);
      hashed = true;
      g.statement(`if (n < ${g.number(rollout.percentage)}) return ${result};`);
    } else if (rollout.kind === ROLLOUT_SEGMENT) {
      const value = rollout.value ? 'true' : 'false';
      g.set(rollout, {
        all: `return ${result};`,
        partial: (keys) => `R(${key}, ${value}, ${keys})`,
      });
    }
  }
  return g.finish(`return ${g.constant(b.fallThrough)};`);
}

/** The return statement when every segment of the rule matched: bounds inlined, results precomputed. */
function allMatchedVariant(g: Generator, flag: CompiledFlag, rule: CompiledRule): string {
  const bounds = rule.bounds;
  if (bounds.length === 0) return `return ${g.constant(rule.noDistributions)};`;
  const last = bounds.length - 1;
  // No miss: the last distribution ends at 1000 and takes every bucket the others leave.
  let pick = rule.miss === null ? g.constant(rule.hits[last]) : `b < ${g.number(bounds[last])} ? ${g.constant(rule.hits[last])} : ${g.constant(rule.miss)}`;
  for (let i = last - 1; i >= 0; i--) pick = `b < ${g.number(bounds[i])} ? ${g.constant(rule.hits[i])} : ${pick}`;
  return `{ const b = VB(${g.number(flag.keyCrc)}, e); return ${pick}; }`;
}

/** A JSON string literal is a JS string literal; U+2028/2029 escaped too so no engine can read them as line ends. */
export function literal(s: string): string {
  return JSON.stringify(s).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

interface SetCode {
  /** Statement(s) ending the function when every segment matched. */
  readonly all: string;
  /** Expression of the result for a partial OR match, given an expression of the matched keys. */
  readonly partial: (keys: string) => string;
}

// Slot kinds: what is derived from a context property, each at most once per call.
const STR = 0;
const NUM = 1;
const BOOL = 2;
const TIME = 3;
const PREFIX = ['s', 'n', 'b', 't'];

class Generator {
  private readonly consts: unknown[] = [];
  private readonly constIndex = new Map<unknown, number>();
  private readonly slots = new Map<string, number>();
  /** Declared variables (`s0`, `n0`...), by name. */
  private readonly declared = new Set<string>();
  /** Declarations needed by the expressions built since the last statement. */
  private pending: string[] = [];
  private readonly body: string[] = [];

  /** An identifier bound to `value` in the constants array (deduplicated by identity). */
  constant(value: unknown): string {
    let i = this.constIndex.get(value);
    if (i === undefined) {
      i = this.consts.length;
      this.consts.push(value);
      this.constIndex.set(value, i);
    }
    return `k${i}`;
  }

  /** A number as code: finite ones as their shortest round-trip literal, the others as constants. */
  number(n: number): string {
    return Number.isFinite(n) ? `(${String(n)})` : this.constant(n);
  }

  statement(code: string): void {
    this.flushDeclarations();
    this.body.push(code);
  }

  /**
   * The code of a segment set (a rule or a segment rollout) at this point of the sequence:
   * returns from the function when the set matches, falls through otherwise.
   */
  set(set: CompiledSegmentSet, code: SetCode): void {
    const segs = set.segments;
    const n = segs.length;
    if (set.unknownType || (!set.and && n > MAX_MASK_SEGMENTS)) {
      // The interpreter throws `unknown constraint type` exactly when this set is reached.
      const s = this.constant(set);
      const all = this.constant(set.allKeys);
      this.statement(`{ const m = MS(${s}, e, ctx); if (m !== null) { if (m === ${all}) ${code.all} return ${code.partial('m')}; } }`);
      return;
    }
    if (set.and) {
      // AND over nothing matches everyone.
      const cond = segs.map((s) => `(${this.segment(s)})`).join(' && ') || 'true';
      this.statement(`if (${cond}) ${code.all}`);
      return;
    }
    if (n === 0) return; // OR over nothing never matches
    if (n === 1) {
      this.statement(`if (${this.segment(segs[0])}) ${code.all}`);
      return;
    }
    // OR: every segment is tested, and the matched ones are the result's segmentKeys.
    const mask = segs.map((s, i) => `((${this.segment(s)}) ? ${2 ** i} : 0)`).join(' | ');
    const all = this.constant(set.allKeys);
    this.statement(`{ const m = ${mask}; if (m !== 0) { if (m === ${2 ** n - 1}) ${code.all} return ${code.partial(`P(${all}, m)`)}; } }`);
  }

  private segment(s: CompiledSegment): string {
    const cs = s.constraints;
    if (cs.length === 0) return 'true';
    return cs.map((c) => `(${this.constraint(c)})`).join(s.all ? ' && ' : ' || ');
  }

  /** Mirrors matchConstraint case by case; `v !== ''` stands for its "false on an empty value". */
  private constraint(c: CompiledConstraint): string {
    const v = c.entity ? 'e' : this.slot(c.property, STR);
    switch (c.op) {
      case OP_NEVER:
        return 'false';
      case OP_BLANK:
        return `B(${v})`;
      case OP_NOT_BLANK:
        return `!B(${v})`;
      case OP_STR_EQ:
        return c.str === '' ? 'false' : `${v} === ${literal(c.str)}`;
      case OP_STR_NEQ:
        return `${v} !== '' && ${v} !== ${literal(c.str)}`;
      case OP_STR_PREFIX:
        return `${v} !== '' && HP(${v}, ${literal(c.str)})`;
      case OP_STR_SUFFIX:
        return `${v} !== '' && HS(${v}, ${literal(c.str)})`;
      case OP_STR_CONTAINS:
        return `${v} !== '' && ${v}.includes(${literal(c.str)})`;
      case OP_STR_NOTCONTAINS:
        return `${v} !== '' && !${v}.includes(${literal(c.str)})`;
      case OP_STR_ONEOF:
        return `${v} !== '' && ${this.constant(c.strings)}.has(${v})`;
      case OP_STR_NOTONEOF:
        return `${v} !== '' && !${this.constant(c.strings)}.has(${v})`;
    }
    if (c.entity) return this.interpreted(c); // the entity id is only compared as a string
    switch (c.op) {
      case OP_NUM_EQ:
        return this.number_(c, '===');
      case OP_NUM_NEQ:
        return this.number_(c, '!==');
      case OP_NUM_LT:
        return this.number_(c, '<');
      case OP_NUM_LTE:
        return this.number_(c, '<=');
      case OP_NUM_GT:
        return this.number_(c, '>');
      case OP_NUM_GTE:
        return this.number_(c, '>=');
      case OP_NUM_ONEOF: {
        const n = this.slot(c.property, NUM);
        return `${n} !== undefined && ${this.constant(c.numbers)}.has(${n})`;
      }
      case OP_NUM_NOTONEOF: {
        const n = this.slot(c.property, NUM);
        return `${n} !== undefined && !${this.constant(c.numbers)}.has(${n})`;
      }
      case OP_BOOL_TRUE:
        return `${this.slot(c.property, BOOL)} === true`;
      case OP_BOOL_FALSE:
        return `${this.slot(c.property, BOOL)} === false`;
      case OP_TIME_EQ:
        return this.time(c, '===');
      case OP_TIME_NEQ:
        return this.time(c, '!==');
      case OP_TIME_LT:
        return this.time(c, '<');
      case OP_TIME_LTE:
        return this.time(c, '<=');
      case OP_TIME_GT:
        return this.time(c, '>');
      case OP_TIME_GTE:
        return this.time(c, '>=');
      default:
        return this.interpreted(c);
    }
  }

  private number_(c: CompiledConstraint, op: string): string {
    const n = this.slot(c.property, NUM);
    // NaN (a context value of `nan`) compares false except with !==, as in Go and the interpreter.
    return `${n} !== undefined && ${n} ${op} ${this.number(c.num)}`;
  }

  private time(c: CompiledConstraint, op: string): string {
    const t = this.slot(c.property, TIME);
    return `${t} !== undefined && CT(${t}, ${this.number(c.sec)}, ${this.number(c.nsec)}) ${op} 0`;
  }

  private interpreted(c: CompiledConstraint): string {
    return `M(${this.constant(c)}, e, ctx)`;
  }

  /**
   * The variable holding `kind` of the context property, declared before the statement being
   * built (statements run in sequence at the top level, so a variable declared before the first
   * statement that uses it is in scope for every later one, and is computed only if reached).
   */
  private slot(property: string, kind: number): string {
    let i = this.slots.get(property);
    if (i === undefined) {
      i = this.slots.size;
      this.slots.set(property, i);
    }
    const name = `${PREFIX[kind]}${i}`;
    if (!this.declared.has(name)) {
      this.declared.add(name);
      const s = kind === STR ? '' : this.slot(property, STR);
      switch (kind) {
        case STR:
          // typeof guards inherited members (`constructor`...): an absent key reads as "".
          this.pending.push(`const x${i} = ctx[${literal(property)}]; const ${name} = typeof x${i} === 'string' ? x${i} : '';`);
          break;
        case NUM:
          this.pending.push(`const ${name} = ${s} === '' ? undefined : F(${s});`);
          break;
        case BOOL:
          this.pending.push(`const ${name} = G(${s});`);
          break;
        default:
          this.pending.push(`const ${name} = ${s} === '' ? undefined : TM(${s});`);
      }
    }
    return name;
  }

  private flushDeclarations(): void {
    if (this.pending.length > 0) this.body.push(...this.pending);
    this.pending = [];
  }

  finish<R>(last: string): GeneratedMatcher<R> | null {
    this.statement(last);
    const hoisted = this.consts.map((_, i) => `const k${i} = K[${i}];`).join('\n');
    const source =
      `'use strict';\nconst { B, HP, HS, F, G, TM, CT, M, MS, P, VB, T, D, R } = H;\n${hoisted}\n` +
      `return function generatedMatcher(ctx, e) {\n${this.body.join('\n')}\n};`;
    if (source.length > MAX_SOURCE_LENGTH) return null;
    try {
      const make = new Function('K', 'H', source) as (
        k: readonly unknown[],
        h: typeof HELPERS,
      ) => GeneratedMatcher<R>;
      return make(this.consts, HELPERS);
    } catch {
      return null; // e.g. code generation refused after all: the interpreter stays in charge
    }
  }
}

/** Matched keys of a partial OR match from the bitmask, in declared order (as the interpreter builds them). */
function pickKeys(all: readonly string[], mask: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < all.length; i++) if ((mask & (2 ** i)) !== 0) out.push(all[i]);
  return out;
}

function compareTime(t: Instant, sec: number, nsec: number): number {
  return t.seconds !== sec ? t.seconds - sec : t.nanos - nsec;
}

function partialBoolean(flagKey: string, value: boolean, keys: readonly string[]): BooleanResult {
  return booleanResult(flagKey, value, 'MATCH_EVALUATION_REASON', keys);
}

const HELPERS = Object.freeze({
  B: isGoBlank,
  HP: hasTrimmedPrefix,
  HS: hasTrimmedSuffix,
  F: parseGoFloat,
  G: parseGoBool,
  TM: parseGoTime,
  CT: compareTime,
  M: matchConstraint,
  MS: matchSegmentSet,
  P: pickKeys,
  VB: variantBucket,
  T: thresholdValue,
  D: decideRule,
  R: partialBoolean,
});
