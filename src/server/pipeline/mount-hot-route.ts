/**
 * A hot route (hot-route.ts) on the Koa router: the body through the request-body glue (shared
 * with authentication, which may have read it), one snapshot through read-snapshot.ts (so the
 * request log's X-Vexil-Revision names it), errors thrown to the error middleware (OFREP's under
 * /ofrep/). Headers are set in the order the fast path writes them: the route's, then the content's.
 */
import type Router from '@koa/router';
import type { SnapshotStore } from '../../store/types.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { requestBody } from '../../http/request-body.js';
import type { AnyHotRoute, HotRequest } from './hot-route.js';
import { readSnapshot } from './read-snapshot.js';
import './request-span.js';

/** The hot route's view of a Koa request. */
function hotRequestOf(ctx: AppRouterContext): HotRequest {
  return {
    params: ctx.params,
    query: ctx.state.query,
    headers: ctx.req.headers,
    pretty: ctx.state.pretty,
    startedAt: ctx.state.startedAt,
    generatedId: ctx.state.requestId !== ctx.get('X-Request-Id') ? ctx.state.requestId : undefined,
    authenticated: ctx.state.authentication !== undefined,
    span: ctx.state.span,
  };
}

export function mountHotRoute(router: Router<AppState>, route: AnyHotRoute, store: SnapshotStore): void {
  const handler = async (ctx: AppRouterContext) => {
    const req = hotRequestOf(ctx);
    const prepared = route.prepare(req, route.method === 'POST' ? await requestBody(ctx) : undefined);
    let snapshot;
    try {
      snapshot = await readSnapshot(ctx, store, route.reference(prepared));
    } catch (err) {
      throw route.referenceFailure !== undefined ? route.referenceFailure(err) : err;
    }
    const answer = route.answer(prepared, snapshot, req);
    const headers = answer.headers;
    if (headers !== undefined) for (let i = 0; i < headers.length; i += 2) ctx.set(headers[i]!, headers[i + 1]!);
    ctx.status = answer.status;
    if (answer.body === undefined) return;
    ctx.type = 'application/json';
    ctx.body = answer.body;
  };
  if (route.method === 'POST') router.post(route.pattern, handler);
  else router.get(route.pattern, handler);
}
