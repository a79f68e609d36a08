/**
 * `GET /api/v1/checks?reference=&namespace=&flag=&segment=` and its namespaced form
 * `GET /api/v1/namespaces/{namespace}/checks?reference=&flag=&segment=`: the semantic checks
 * `vexil validate` reports (rule, severity, message, hint, file:line:column), for the state a
 * reference serves, each saying which namespace and flag or segment it concerns. `flag` and
 * `segment` need a namespace (the query's or the path's). Paged like the other lists (`limit`,
 * `pageToken`). Auth: the management section; the namespaced form is scoped to its namespace, the
 * other spans namespaces (unscoped tokens only, auth/scope.ts).
 *
 * The checks are computed by the store on the first ask for a snapshot and kept with it
 * (store/served-checks.ts), never on the evaluation path.
 */
import type Router from '@koa/router';
import { Code, VexilError, invalidArgument } from '../../errors.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import type { SnapshotStore } from '../../store/types.js';
import { paginate, parsePageParams, requireLimitWhenPaging } from '../pipeline/pagination.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';
import { checkJson, pickChecks, type CheckFilter } from './answer.js';

/** Longest namespace, flag or segment key looked up (state keys are far shorter). */
const MAX_KEY_LENGTH = 1024;

function keyParam(ctx: AppRouterContext, name: string): string | undefined {
  const v = ctx.state.query.get(name);
  if (v === undefined || v === '') return undefined;
  if (v.length > MAX_KEY_LENGTH) throw invalidArgument(`${name} must be at most ${MAX_KEY_LENGTH} characters`);
  return v;
}

export function registerCheckRoutes(router: Router<AppState>, deps: { store: SnapshotStore }): void {
  const { store } = deps;

  async function answer(ctx: AppRouterContext, pathNamespace: string | undefined): Promise<void> {
    const namespace = pathNamespace ?? keyParam(ctx, 'namespace');
    const flag = keyParam(ctx, 'flag');
    const segment = keyParam(ctx, 'segment');
    if (namespace === undefined && (flag !== undefined || segment !== undefined)) {
      throw invalidArgument('flag and segment need a namespace: add namespace=... or use /api/v1/namespaces/{namespace}/checks');
    }
    const page = parsePageParams(ctx.state.query);
    requireLimitWhenPaging(page);
    const snapshot = await readSnapshot(ctx, store, ctx.state.query.get('reference'));
    if (store.checks === undefined) throw new VexilError(Code.Unimplemented, 'this server does not compute checks');
    const filter: CheckFilter = {
      ...(namespace !== undefined ? { namespace } : {}),
      ...(flag !== undefined ? { flag } : {}),
      ...(segment !== undefined ? { segment } : {}),
    };
    // Before the checks are computed: a namespace, flag or segment the state lacks is a 404 at once.
    pickChecks(snapshot, { reference: snapshot.reference, revision: snapshot.revision, checkedAt: '', checks: [] }, filter);
    const served = await store.checks(snapshot);
    const listed = paginate(pickChecks(snapshot, served, filter).map(checkJson), page);
    sendJson(ctx, {
      reference: served.reference,
      revision: served.revision,
      checkedAt: served.checkedAt,
      checks: listed.items,
      nextPageToken: listed.nextPageToken,
      totalCount: listed.totalCount,
    });
  }

  router.get('/api/v1/checks', (ctx) => answer(ctx, undefined));
  router.get('/api/v1/namespaces/:namespaceKey/checks', (ctx) => answer(ctx, ctx.params.namespaceKey!));
}
