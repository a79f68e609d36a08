/** The evaluation core: pure functions of one snapshot (see flipt-semantics.md §2). */
export { evaluateVariant } from './variant.js';
export { evaluateBoolean } from './boolean.js';
export { evaluateBatch } from './batch.js';
export { compileFlag } from './compile.js';
export { findFlag, lookupFlag } from './lookup.js';
export { parseGoBool, parseGoFloat, parseGoTime, parseNumberArray, parseStringArray, compareInstant, type Instant } from './values.js';
export type { CompiledFlag } from '../model/compiled.js';
export type { EvaluationRequest } from '../model/evaluation-request.js';
export type { BatchItemResult, BooleanResult, EvaluationReason, VariantResult } from '../model/evaluation-result.js';
