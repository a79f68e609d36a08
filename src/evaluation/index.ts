/** The evaluation core: pure functions of one snapshot (see flipt-semantics.md §2). */
export { evaluateVariant } from './variant.js';
export { evaluateBoolean } from './boolean.js';
export { evaluateBatch } from './batch.js';
export { compileFlag, type CompiledFlag } from './compile.js';
export { findFlag, lookupFlag } from './lookup.js';
export type { BatchItemResult, BooleanResult, EvaluationReason, EvaluationRequest, VariantResult } from './types.js';
export { parseGoBool, parseGoFloat, parseGoTime, parseNumberArray, parseStringArray, compareInstant, type Instant } from './values.js';
