/**
 * Two light reads for the UI (and scripts) under the management section:
 * - `GET /api/v1/namespaces/{namespace}/outline?reference=[&flags=a b c]`: every flag's (or the
 *   named flags', at most 200 keys separated by spaces, which no key contains) rules and rollouts
 *   as ranks, segment keys, percentages and values (answer.ts), and the segments that match
 *   everyone; the flags list (for the flags it shows) and the flag page word what a flag serves
 *   from it, the segments list counts uses.
 * - `GET /api/v1/namespaces/{namespace}/segments/{key}/usage?reference=`: the flags naming one
 *   segment, each with the ranks of its rules and rollouts that do.
 * Both are bounded by the namespace's size (no parameters but the reference and keys), built once per
 * snapshot, gzipped above 8 KB by the compression pipeline, scoped to their namespace by auth.
 */
import type Router from '@koa/router';
import { invalidArgument } from '../../errors.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { SnapshotStore } from '../../store/types.js';
import { readCacheControl } from '../pipeline/cache-control.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';
import { namespaceOutline, segmentUses } from './answer.js';

/** Longest flag key looked up (state keys are far shorter). */
const MAX_KEY_LENGTH = 1024;
/** Most flags named in one outline request (the flags list's largest page). */
const MAX_KEYS = 200;

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
    const named = ctx.state.query.get('flags');
    if (named === undefined || named.trim() === '') {
      send(ctx, { reference: snapshot.reference, revision: snapshot.revision, ...outline });
      return;
    }
    // Checked before any work: at most MAX_KEYS keys of at most MAX_KEY_LENGTH characters.
    if (named.length > MAX_KEYS * (MAX_KEY_LENGTH + 1)) throw invalidArgument(`flags must name at most ${MAX_KEYS} keys`);
    const keys = new Set(named.split(' ').filter((k) => k !== ''));
    if (keys.size > MAX_KEYS) throw invalidArgument(`flags must name at most ${MAX_KEYS} keys (got ${keys.size})`);
    for (const k of keys) if (k.length > MAX_KEY_LENGTH) throw invalidArgument(`a flag key must be at most ${MAX_KEY_LENGTH} characters`);
    // Keys the namespace lacks are left out (the answer lists what exists).
    send(ctx, { reference: snapshot.reference, revision: snapshot.revision, ...outline, flags: outline.flags.filter((f) => keys.has(f.key)) });
  });

  router.get('/api/v1/namespaces/:namespaceKey/segments/:segmentKey/usage', async (ctx) => {
    const snapshot = await readSnapshot(ctx, store, ctx.state.query.get('reference'));
    const flags = segmentUses(snapshot, ctx.params.namespaceKey!, ctx.params.segmentKey!);
    send(ctx, { reference: snapshot.reference, revision: snapshot.revision, segmentKey: ctx.params.segmentKey!, flags, totalCount: flags.length });
  });
}
