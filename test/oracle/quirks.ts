/**
 * Where Flipt's WASM engine (@flipt-io/flipt-client-js 0.5.1, the Rust `flipt-evaluation` crate)
 * reads an input differently from the Flipt v1 server (flipt-semantics.md §2.6, which vexil
 * follows). These are divergences of the ORACLE from the documented reference, not of vexil, so a
 * difference in a case that touches one of them is counted as excused (per quirk) instead of
 * failing. Each was established by probing the engine constraint by constraint against Go's
 * documented rules (see the report in test/oracle/README.md); cases that touch none of them are
 * compared strictly.
 *
 * The check is deliberately coarse (any constraint of the evaluated flag whose input falls in a
 * quirk class excuses the case) and the generator draws quirk-class values rarely, so most cases
 * stay strict. The excused counts are printed by scripts/oracle.ts.
 *
 * The bucketing difference (the engine normalizes distribution widths, as Flipt v2 does) is not
 * here: it is neutralized for every case by rewriting the distributions (flipt-engine.ts).
 */
import type { ComparisonType } from '../../src/model/enums.js';
import type { GenConstraint, GenFlag, GenNamespace, GenRequest, GenSegmentRef } from '../support/random-state.js';

export type Quirk =
  /** number/boolean/datetime present/notpresent, string/entity empty/notempty: Go trims the value ("  " is blank), Rust does not. */
  | 'blank-not-trimmed'
  /** string/entity prefix/suffix: Go trims the context value first, Rust does not. */
  | 'prefix-suffix-not-trimmed'
  /** number: Rust parses context values, operands and isoneof lists as i32 only ("3.5", "1e2", "NaN", "2147483648" fail); Go parses float64. */
  | 'number-not-i32'
  /** boolean: Rust accepts only "true"/"false"; Go also 1 t T TRUE True 0 f F FALSE False. */
  | 'bool-syntax'
  /** datetime: Rust truncates to whole seconds, refuses date-only values and accepts `t`/`z`/space forms Go refuses. */
  | 'datetime-syntax'
  /** string isoneof: serde borrows &str, so a JSON string with an escape sequence fails to parse in Rust only. */
  | 'json-escape';

export const QUIRKS: readonly Quirk[] = ['blank-not-trimmed', 'prefix-suffix-not-trimmed', 'number-not-i32', 'bool-syntax', 'datetime-syntax', 'json-escape'];

const I32 = /^[+-]?\d+$/;
function isI32(s: string): boolean {
  if (!I32.test(s)) return false;
  const n = Number(s);
  return n >= -2147483648 && n <= 2147483647;
}

/** Whole seconds, upper-case T and Z: the one date-time shape both engines read identically. */
const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/;
/** Anything either engine may read as a date-time. */
const TIME_LIKE = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?$/;
const timeQuirky = (s: string) => s !== '' && TIME_LIKE.test(s) && !CANONICAL_TIME.test(s);

const GO_ONLY_BOOLS = new Set(['1', 't', 'T', 'TRUE', 'True', '0', 'f', 'F', 'FALSE', 'False']);
const isBlankButNotEmpty = (s: string) => s !== '' && s.trim() === '';

/** The quirk a constraint falls into for the value it reads (context value or entity id), if any. */
export function constraintQuirk(c: GenConstraint, v: string): Quirk | undefined {
  const type: ComparisonType = c.type;
  const op = c.operator;
  const operand = c.value ?? '';
  if (op === 'present' || op === 'notpresent' || op === 'empty' || op === 'notempty') {
    return isBlankButNotEmpty(v) ? 'blank-not-trimmed' : undefined;
  }
  if (v === '') return undefined; // both engines: every other operator is false on an empty value
  switch (type) {
    case 'STRING_COMPARISON_TYPE':
    case 'ENTITY_ID_COMPARISON_TYPE':
      if ((op === 'prefix' || op === 'suffix') && v !== v.trim()) return 'prefix-suffix-not-trimmed';
      if ((op === 'isoneof' || op === 'isnotoneof') && operand.includes('\\')) return 'json-escape';
      return undefined;
    case 'NUMBER_COMPARISON_TYPE': {
      if (!isI32(v)) {
        // A value neither engine reads as a number makes every operator false on both sides.
        return looksNumeric(v) ? 'number-not-i32' : undefined;
      }
      if (op === 'isoneof' || op === 'isnotoneof') {
        const list = JSON.parse(operand) as number[];
        return list.every((n) => Number.isInteger(n) && isI32(String(n))) && !/[.eE]/.test(operand) ? undefined : 'number-not-i32';
      }
      return isI32(operand) ? undefined : 'number-not-i32';
    }
    case 'BOOLEAN_COMPARISON_TYPE':
      return GO_ONLY_BOOLS.has(v) ? 'bool-syntax' : undefined;
    case 'DATETIME_COMPARISON_TYPE':
      return timeQuirky(v) || timeQuirky(operand) ? 'datetime-syntax' : undefined;
  }
}

/** Go's ParseFloat may accept it (decimal, exponent, hex float, inf/nan, underscores): then the engines may disagree. */
function looksNumeric(s: string): boolean {
  return /^[+-]?(\d|\.\d|0[xX]|inf|infinity|nan)/i.test(s);
}

function segmentsOf(ns: GenNamespace, refs: readonly GenSegmentRef[]) {
  const keys = new Set(refs.flatMap((r) => r.keys));
  return ns.segments.filter((s) => keys.has(s.key));
}

/** Every quirk the request touches through any constraint of the flag's rules or rollouts. */
export function requestQuirks(ns: GenNamespace, flag: GenFlag | undefined, req: GenRequest): Quirk[] {
  if (!flag) return [];
  const refs = flag.type === 'VARIANT_FLAG_TYPE' ? flag.rules.map((r) => r.segment) : flag.rollouts.flatMap((r) => (r.kind === 'segment' ? [r.segment] : []));
  const found = new Set<Quirk>();
  for (const s of segmentsOf(ns, refs)) {
    for (const c of s.constraints) {
      const v = c.type === 'ENTITY_ID_COMPARISON_TYPE' ? req.entityId : (req.context[c.property] ?? '');
      const q = constraintQuirk(c, v);
      if (q) found.add(q);
    }
  }
  return [...found];
}
