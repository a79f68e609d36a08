/**
 * `GET /api/v1/diff?base=<ref>&head=<ref>[&namespace=NS][&impact=N]`: the semantic diff of two
 * references the store can build (branches, tags, full commit ids), with the impact preview over
 * N synthetic entities when `impact` is given: entity ids `entity-1`... each given in turn one of
 * the contexts of the head's flag test files (kept with the snapshot, store/test-contexts.ts;
 * the empty context when it has none), the sample `vexil diff` takes by default. The body follows
 * schemas/diff.schema.json. Auth: the management section, unscoped tokens only (auth/scope.ts).
 */
import type Router from '@koa/router';
import { MAX_IMPACT_ENTITIES, syntheticSample } from '../../diff/impact.js';
import { diffReport } from '../../diff/report.js';
import { invalidArgument } from '../../errors.js';
import { testContextsOf } from '../../store/test-contexts.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppState } from '../context.js';
import { sendJson } from '../respond.js';

const clip = (v: string) => (v.length > 64 ? `${v.slice(0, 64)}…` : v);

export function registerDiffRoutes(router: Router<AppState>, deps: { store: SnapshotStore }): void {
  router.get('/api/v1/diff', async (ctx) => {
    const q = ctx.state.query;
    const base = q.get('base') ?? '';
    const head = q.get('head') ?? '';
    if (base === '') throw invalidArgument('base must be a reference (branch, tag or commit id)');
    if (head === '') throw invalidArgument('head must be a reference (branch, tag or commit id)');
    const namespace = q.get('namespace');
    const impactText = q.get('impact');
    let entities: number | undefined;
    if (impactText !== undefined) {
      if (!/^\d{1,7}$/.test(impactText) || Number(impactText) > MAX_IMPACT_ENTITIES) {
        throw invalidArgument(`impact must be an integer from 0 to ${MAX_IMPACT_ENTITIES} (got "${clip(impactText)}")`);
      }
      entities = Number(impactText);
    }
    // The store answers NotFound naming the reference it cannot build.
    const [b, h] = await Promise.all([deps.store.resolve(base), deps.store.resolve(head)]);
    ctx.state.snapshot = h;
    const contexts = testContextsOf(h);
    const report = diffReport(b, h, {
      ...(namespace !== undefined && namespace !== '' ? { namespace } : {}),
      ...(entities !== undefined && entities > 0 ? { impact: { sample: syntheticSample(entities, contexts), source: 'synthetic', contexts: contexts.length } } : {}),
    });
    sendJson(ctx, report);
  });
}
