/**
 * `GET /api/v1/diff?base=<ref>&head=<ref>[&namespace=NS][&impact=N][&policy=true|auto]`: the semantic diff of two
 * references the store can build (branches, tags, full commit ids), with the impact preview over
 * N synthetic entities when `impact` is given: entity ids `entity-1`... each given in turn one of
 * the contexts of the head's flag test files (kept with the snapshot, store/test-contexts.ts;
 * the empty context when it has none), the sample `vexil diff` takes by default. With
 * `policy=true` the answer also has `guards`: the policy's guards on the change (guards.ts; the
 * impact guard takes 10,000 entities when `impact` is not given); `policy=auto` does the same when
 * either reference has a policy file and answers without `guards` when neither has. The body follows
 * schemas/diff.schema.json. Auth: the management section, unscoped tokens only (auth/scope.ts).
 * At most `diff.max_concurrent` diffs are in progress (503 with Retry-After beyond), and their work
 * runs in time slices between other requests (slices.ts), abandoned if the client goes away.
 */
import type Router from '@koa/router';
import { DEFAULT_IMPACT_ENTITIES, MAX_IMPACT_ENTITIES } from '../../diff/impact.js';
import { diffReportSteps } from '../../diff/report.js';
import { invalidArgument } from '../../errors.js';
import { testContextsOf } from '../../store/test-contexts.js';
import type { SnapshotStore } from '../../store/types.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { DiffSlices } from './slices.js';
import { choosePolicy, guardReport, hasPolicy } from './guards.js';

const clip = (v: string) => (v.length > 64 ? `${v.slice(0, 64)}…` : v);

export function registerDiffRoutes(router: Router<AppState>, deps: { store: SnapshotStore; slices: DiffSlices }): void {
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
    const policyText = q.get('policy');
    if (policyText !== undefined && policyText !== 'true' && policyText !== 'false' && policyText !== 'auto') {
      throw invalidArgument(`policy must be true, false or auto (got "${clip(policyText)}")`);
    }
    const release = deps.slices.admit();
    // The client going away abandons the diff at its next slice (and frees its place).
    const gone = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableEnded) gone.abort();
    };
    ctx.res.once('close', onClose);
    try {
      // The store answers NotFound naming the reference it cannot build.
      const [b, h] = await Promise.all([deps.store.resolve(base), deps.store.resolve(head)]);
      ctx.state.snapshot = h;
      const withPolicy = policyText === 'true' || (policyText === 'auto' && hasPolicy(b, h));
      const chosen = withPolicy ? choosePolicy(b, h, { base, head }) : undefined;
      // The impact guard needs a sample: the CLI's default size when the request names none.
      const sampled = entities ?? (chosen?.policy.guards?.maxImpactShare !== undefined ? DEFAULT_IMPACT_ENTITIES : undefined);
      const report = await deps.slices.run(
        diffReportSteps(b, h, {
          ...(namespace !== undefined && namespace !== '' ? { namespace } : {}),
          ...(sampled !== undefined && sampled > 0 ? { impact: { entities: sampled, contexts: testContextsOf(h) } } : {}),
        }),
        gone.signal,
      );
      sendJson(ctx, chosen !== undefined ? { ...report, guards: guardReport(report, chosen) } : report);
    } finally {
      ctx.res.off('close', onClose);
      release();
    }
  });
}
