/**
 * What the pure evaluators are asked: one request (namespace, flag, entity, context) and the
 * context a compiled matcher reads. Types only (ground floor): the HTTP request parsers, the CLI,
 * flag tests and the evaluators share them.
 */
export interface EvaluationRequest {
  /** Empty means `default`. */
  readonly namespaceKey: string;
  readonly flagKey: string;
  readonly entityId: string;
  /** A missing key reads as "" (absent and empty are the same, as in Flipt). */
  readonly context: EvaluationContext;
}

/** The request context as matchers read it: a missing key reads as "". */
export type EvaluationContext = Readonly<Record<string, string>>;
