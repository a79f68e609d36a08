/**
 * The evaluation API's hot routes (`POST /evaluate/v1/{variant,boolean,batch}` and the variant
 * alias under a namespace path): the body is checked by request.ts, the reference is the body's
 * `reference`, and the answer is the evaluation core's text (answer.ts), written from cached
 * fragments and known to be ASCII when it is. Served by both HTTP paths (pipeline/hot-route.ts).
 */
import type { HotRoute } from '../pipeline/hot-route.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { evaluationResponseText } from './answer.js';
import { parseEvaluation, referenceOf, type EvaluationKind, type ParsedEvaluation } from './request.js';

export function evaluationHotRoutes(deps: { metrics: ServerMetrics }): HotRoute<ParsedEvaluation>[] {
  const { metrics } = deps;
  const route = (pattern: string, kind: EvaluationKind): HotRoute<ParsedEvaluation> => ({
    method: 'POST',
    pattern,
    errors: 'api',
    prepare: (req, body) => parseEvaluation(kind, body, kind === 'variant' ? req.params.namespaceKey : undefined),
    reference: referenceOf,
    answer(p, snapshot, req) {
      const { text, ascii } = evaluationResponseText(p, snapshot, req.startedAt, metrics, req.pretty, req.generatedId, req.span);
      return { status: 200, body: text, ascii };
    },
  });
  return [
    route('/evaluate/v1/variant', 'variant'),
    route('/evaluate/v1/boolean', 'boolean'),
    route('/evaluate/v1/batch', 'batch'),
    route('/evaluate/v1/namespaces/:namespaceKey/variant', 'variant'),
  ];
}
