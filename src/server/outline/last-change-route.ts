/**
 * `GET /api/v1/namespaces/{namespace}/flags/{key}/last-change?reference=` (a vexil extension): the
 * newest commit of the first-parent history of the served revision that changed the flag's
 * definition, as `{reference, revision, lastChange: {revision, parent?, author, message,
 * committedAt}}`, or `lastChange: {revision: null, reason}` when it is not within the walk's bound
 * (store/last-change.ts: at most 200 commits) or the source keeps no history (a local folder, OCI,
 * object storage). The flag page shows it. Auth: the management section, scoped to the namespace
 * (auth/scope.ts, like the outline). Work is done by the store once per (revision, namespace, flag).
 */
import type Router from '@koa/router';
import { Code, VexilError, invalidArgument } from '../../errors.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { SnapshotStore } from '../../store/types.js';
import { readCacheControl } from '../pipeline/cache-control.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

/** Longest namespace or flag key looked up (state keys are far shorter). */
const MAX_KEY_LENGTH = 1024;

export function registerLastChangeRoute(router: Router<AppState>, deps: { store: SnapshotStore }): void {
  const { store } = deps;
  router.get('/api/v1/namespaces/:namespaceKey/flags/:flagKey/last-change', async (ctx) => {
    const namespace = ctx.params.namespaceKey!;
    const flagKey = ctx.params.flagKey!;
    if (namespace.length > MAX_KEY_LENGTH) throw invalidArgument(`a namespace key must be at most ${MAX_KEY_LENGTH} characters`);
    if (flagKey.length > MAX_KEY_LENGTH) throw invalidArgument(`a flag key must be at most ${MAX_KEY_LENGTH} characters`);
    const snapshot = await readSnapshot(ctx, store, ctx.state.query.get('reference'));
    if (store.lastChange === undefined) throw new VexilError(Code.Unimplemented, 'this server does not read commit history');
    const lastChange = await store.lastChange(snapshot, namespace, flagKey);
    sendJson(ctx, { reference: snapshot.reference, revision: snapshot.revision, namespaceKey: namespace, flagKey, lastChange });
    const cacheControl = readCacheControl(store, ctx.state.query, ctx.state.authentication !== undefined, undefined);
    if (cacheControl !== undefined) ctx.set('Cache-Control', cacheControl);
  });
}
