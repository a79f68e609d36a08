/**
 * Two light reads for the UI (and scripts) under the management section:
 * - `GET /api/v1/namespaces/{namespace}/outline?reference=[&flag=]`: every flag's (or one flag's)
 *   rules and rollouts as ranks, segment keys, percentages and values (answer.ts), and the segments
 *   that match everyone; the flags list and the flag page word what a flag serves from it, the
 *   segments list counts uses.
 * - `GET /api/v1/namespaces/{namespace}/segments/{key}/usage?reference=`: the flags naming one
 *   segment, each with the ranks of its rules and rollouts that do.
 * Both are bounded by the namespace's size (no parameters but the reference and a key), built once per
 * snapshot, gzipped above 8 KB by the compression pipeline, scoped to their namespace by auth.
 */
import type Router from '@koa/router';
import { invalidArgument, notFound } from '../../errors.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { SnapshotStore } from '../../store/types.js';
import { readCacheControl } from '../pipeline/cache-control.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';
import { namespaceOutline, segmentUses } from './answer.js';

/** Longest flag key looked up (state keys are far shorter). */
const MAX_KEY_LENGTH = 1024;

export function registerOutlineRoutes(router: Router<AppState>, deps: { store: SnapshotStore }): void {
  const { store } = deps;
  const send = (ctx: AppRouterContext, body: unknown) => {
    sendJson(ctx, body);
    const cacheControl = readCacheControl(store, ctx.state.query, ctx.state.authentication !== undefined, undefined);
    if (cacheControl !== undefined) ctx.set('Cache-Control', cacheControl);
  };

  router.get('/api/v1/namespaces/:namespaceKey/outline', async (ctx) => {
    const snapshot = await readSnapshot(ctx, store, ctx.state.query.get('reference'));
    const outline = namespaceOutline(snapshot, ctx.params.namespaceKey!);
    const flag = ctx.state.query.get('flag');
    if (flag === undefined || flag === '') {
      send(ctx, { reference: snapshot.reference, revision: snapshot.revision, ...outline });
      return;
    }
    if (flag.length > MAX_KEY_LENGTH) throw invalidArgument(`flag must be at most ${MAX_KEY_LENGTH} characters`);
    const one = outline.flags.find((f) => f.key === flag);
    if (one === undefined) throw notFound(`flag "${outline.namespaceKey}/${flag}" not found`);
    send(ctx, { reference: snapshot.reference, revision: snapshot.revision, ...outline, flags: [one] });
  });

  router.get('/api/v1/namespaces/:namespaceKey/segments/:segmentKey/usage', async (ctx) => {
    const snapshot = await readSnapshot(ctx, store, ctx.state.query.get('reference'));
    const flags = segmentUses(snapshot, ctx.params.namespaceKey!, ctx.params.segmentKey!);
    send(ctx, { reference: snapshot.reference, revision: snapshot.revision, segmentKey: ctx.params.segmentKey!, flags, totalCount: flags.length });
  });
}
