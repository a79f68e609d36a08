/**
 * The numbers the compiled program speaks: one opcode per (comparison type, operator) behaviour,
 * the tables that map a declared operator to its opcode, and the kinds of a compiled rollout.
 * Written by compile-segments.ts (constraints) and compile.ts (rollouts), read by the interpreter
 * (constraints.ts, boolean.ts), the generated matchers (codegen.ts) and explain.ts. Constants only.
 */
import type { ComparisonType } from '../model/enums.js';

/** Never true whatever the input (unknown operator, `le`, a constraint value Go cannot parse...). */
export const OP_NEVER = 0;
/** Go `len(strings.TrimSpace(v)) == 0`: string `empty`, number/boolean/datetime `notpresent`. */
export const OP_BLANK = 1;
/** Negation of OP_BLANK: string `notempty`, number/boolean/datetime `present`. */
export const OP_NOT_BLANK = 2;
export const OP_STR_EQ = 3;
export const OP_STR_NEQ = 4;
export const OP_STR_PREFIX = 5;
export const OP_STR_SUFFIX = 6;
export const OP_STR_CONTAINS = 7;
export const OP_STR_NOTCONTAINS = 8;
export const OP_STR_ONEOF = 9;
export const OP_STR_NOTONEOF = 10;
export const OP_NUM_EQ = 11;
export const OP_NUM_NEQ = 12;
export const OP_NUM_LT = 13;
export const OP_NUM_LTE = 14;
export const OP_NUM_GT = 15;
export const OP_NUM_GTE = 16;
export const OP_NUM_ONEOF = 17;
export const OP_NUM_NOTONEOF = 18;
export const OP_BOOL_TRUE = 19;
export const OP_BOOL_FALSE = 20;
export const OP_TIME_EQ = 21;
export const OP_TIME_NEQ = 22;
export const OP_TIME_LT = 23;
export const OP_TIME_LTE = 24;
export const OP_TIME_GT = 25;
export const OP_TIME_GTE = 26;

const STRING_OPS: Readonly<Record<string, number>> = {
  empty: OP_BLANK,
  notempty: OP_NOT_BLANK,
  eq: OP_STR_EQ,
  neq: OP_STR_NEQ,
  prefix: OP_STR_PREFIX,
  suffix: OP_STR_SUFFIX,
  contains: OP_STR_CONTAINS,
  notcontains: OP_STR_NOTCONTAINS,
  isoneof: OP_STR_ONEOF,
  isnotoneof: OP_STR_NOTONEOF,
};
// No `le`: Flipt v1's schema lists it but its evaluator has no such case, so it never matches.
const NUMBER_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  eq: OP_NUM_EQ,
  neq: OP_NUM_NEQ,
  lt: OP_NUM_LT,
  lte: OP_NUM_LTE,
  gt: OP_NUM_GT,
  gte: OP_NUM_GTE,
  isoneof: OP_NUM_ONEOF,
  isnotoneof: OP_NUM_NOTONEOF,
};
const BOOLEAN_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  true: OP_BOOL_TRUE,
  false: OP_BOOL_FALSE,
};
const DATETIME_OPS: Readonly<Record<string, number>> = {
  notpresent: OP_BLANK,
  present: OP_NOT_BLANK,
  eq: OP_TIME_EQ,
  neq: OP_TIME_NEQ,
  lt: OP_TIME_LT,
  lte: OP_TIME_LTE,
  gt: OP_TIME_GT,
  gte: OP_TIME_GTE,
};
/** Operator name → opcode, per comparison type (an operator missing from its table is OP_NEVER). */
export const OPS_BY_TYPE: Readonly<Record<ComparisonType, Readonly<Record<string, number>>>> = {
  STRING_COMPARISON_TYPE: STRING_OPS,
  ENTITY_ID_COMPARISON_TYPE: STRING_OPS,
  NUMBER_COMPARISON_TYPE: NUMBER_OPS,
  BOOLEAN_COMPARISON_TYPE: BOOLEAN_OPS,
  DATETIME_COMPARISON_TYPE: DATETIME_OPS,
};

/** CompiledRollout.kind: a rollout with neither threshold nor segment is skipped. */
export const ROLLOUT_SKIP = 0;
export const ROLLOUT_THRESHOLD = 1;
export const ROLLOUT_SEGMENT = 2;
