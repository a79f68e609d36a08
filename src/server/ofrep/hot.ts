/**
 * OFREP's hot route: `POST /ofrep/v1/evaluate/flags/{key}`, one flag. The namespace and the
 * reference come from headers and the query (target.ts), since an OFREP body has only the
 * context; an unknown reference or environment is no missing flag (400 GENERAL). Errors are in
 * OFREP's schema. Served by both HTTP paths (pipeline/hot-route.ts).
 */
import type { Config } from '../../config/types.js';
import type { HotRoute } from '../pipeline/hot-route.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { evaluatedFlagText } from './answer.js';
import { parseOfrepRequest, type OfrepRequest } from './request.js';
import { ofrepNamespace, ofrepReference, referenceFailure } from './target.js';

interface OfrepFlagRequest {
  readonly request: OfrepRequest;
  readonly namespaceKey: string;
  readonly reference: string | undefined;
}

export function ofrepHotRoutes(deps: { metrics: ServerMetrics; environments: Config['environments'] }): HotRoute<OfrepFlagRequest>[] {
  const { metrics, environments } = deps;
  return [
    {
      method: 'POST',
      pattern: '/ofrep/v1/evaluate/flags/:key',
      errors: 'ofrep',
      prepare(req, body) {
        // In this order: the body, the namespace header, then the reference (wrapped: GENERAL).
        const request = parseOfrepRequest(body);
        const namespaceKey = ofrepNamespace(req.headers);
        let reference: string | undefined;
        try {
          reference = ofrepReference(req.headers, req.query, environments);
        } catch (err) {
          throw referenceFailure(err);
        }
        return { request, namespaceKey, reference };
      },
      reference: (p) => p.reference,
      referenceFailure,
      answer(p, snapshot, req) {
        const text = evaluatedFlagText(snapshot, p.namespaceKey, req.params.key!, p.request, metrics, req.span);
        return { status: 200, body: req.pretty ? JSON.stringify(JSON.parse(text), null, 2) : text };
      },
    },
  ];
}
