/**
 * Management writes. Declarative state is read-only: each write is validated like Flipt
 * validates it (400 naming the field), then refused with
 * `{"code":9,"message":"modification is not allowed in read-only mode"}` (HTTP 400; Flipt answers
 * 500, but a read-only store is not a server fault).
 */
import type Router from '@koa/router';
import { Code, VexilError } from '../../errors.js';
import { readJsonObject } from '../../http/body.js';
import { LEGACY, NAMESPACED } from './paths.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { WRITE_SPECS, validateWrite, type WriteOperation } from './write-request.js';

export const READ_ONLY_MESSAGE = 'modification is not allowed in read-only mode';

type Method = 'post' | 'put' | 'delete';

/** Writes under a namespace prefix; `rollouts` only where `namespacedOnly` is unset. */
const NAMESPACE_WRITES: ReadonlyArray<readonly [Method, string, WriteOperation, boolean?]> = [
  ['post', '/flags', 'createFlag'],
  ['put', '/flags/:key', 'updateFlag'],
  ['delete', '/flags/:key', 'delete'],
  ['post', '/flags/:flagKey/variants', 'createVariant'],
  ['put', '/flags/:flagKey/variants/:id', 'updateVariant'],
  ['delete', '/flags/:flagKey/variants/:id', 'delete'],
  ['post', '/segments', 'createSegment'],
  ['put', '/segments/:key', 'updateSegment'],
  ['delete', '/segments/:key', 'delete'],
  ['post', '/segments/:segmentKey/constraints', 'createConstraint'],
  ['put', '/segments/:segmentKey/constraints/:id', 'updateConstraint'],
  ['delete', '/segments/:segmentKey/constraints/:id', 'delete'],
  ['post', '/flags/:flagKey/rules', 'createRule'],
  // Before `rules/:id`: the first matching route answers.
  ['put', '/flags/:flagKey/rules/order', 'orderRules'],
  ['put', '/flags/:flagKey/rules/:id', 'updateRule'],
  ['delete', '/flags/:flagKey/rules/:id', 'delete'],
  ['post', '/flags/:flagKey/rules/:ruleId/distributions', 'createDistribution'],
  ['put', '/flags/:flagKey/rules/:ruleId/distributions/:id', 'updateDistribution'],
  ['delete', '/flags/:flagKey/rules/:ruleId/distributions/:id', 'delete'],
  ['post', '/flags/:flagKey/rollouts', 'createRollout', true],
  ['put', '/flags/:flagKey/rollouts/order', 'orderRollouts', true],
  ['put', '/flags/:flagKey/rollouts/:id', 'updateRollout', true],
  ['delete', '/flags/:flagKey/rollouts/:id', 'delete', true],
];

function refuseWrite(op: WriteOperation) {
  return async (ctx: AppRouterContext) => {
    if (op !== 'delete') validateWrite(await readJsonObject(ctx.req), WRITE_SPECS[op]);
    throw new VexilError(Code.FailedPrecondition, READ_ONLY_MESSAGE);
  };
}

export function registerWriteRoutes(router: Router<AppState>): void {
  router.post('/api/v1/namespaces', refuseWrite('createNamespace'));
  router.put('/api/v1/namespaces/:key', refuseWrite('updateNamespace'));
  router.delete('/api/v1/namespaces/:key', refuseWrite('delete'));
  for (const prefix of [NAMESPACED, LEGACY]) {
    for (const [method, path, op, namespacedOnly] of NAMESPACE_WRITES) {
      if (namespacedOnly && prefix !== NAMESPACED) continue;
      router[method](`${prefix}${path}`, refuseWrite(op));
    }
  }
}
