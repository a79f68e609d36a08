/**
 * Which evaluation a request asks for and its validated input: the one step between a decoded
 * JSON body and the evaluator, shared by the Koa routes (routes.ts) and the node:http
 * fast path (fast-path/), through hot.ts, so both refuse exactly the same requests.
 */
import { asJsonObject } from '../../http/body.js';
import { parseBatchRequest, parseEvaluationRequest, type ParsedBatchRequest, type ParsedEvaluationRequest } from './validate-request.js';

export type EvaluationKind = 'variant' | 'boolean' | 'batch';

export type ParsedEvaluation =
  | { kind: 'variant' | 'boolean'; parsed: ParsedEvaluationRequest }
  | { kind: 'batch'; parsed: ParsedBatchRequest };

/** Validates a parsed JSON body for one evaluation endpoint. */
export function parseEvaluation(kind: EvaluationKind, body: unknown, pathNamespace?: string): ParsedEvaluation {
  const object = asJsonObject(body);
  if (kind === 'batch') return { kind, parsed: parseBatchRequest(object) };
  return { kind, parsed: parseEvaluationRequest(object, pathNamespace !== undefined ? { pathNamespace } : {}) };
}

/** The reference the request reads (undefined = the default one). */
export function referenceOf(p: ParsedEvaluation): string | undefined {
  return p.parsed.reference;
}
