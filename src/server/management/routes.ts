/**
 * Management reads under `/api/v1` (flipt-semantics §3.1, §3.4–§3.6): namespaces, flags,
 * segments, rules and rollouts, list and get, namespaced and (except rollouts) the legacy
 * unnamespaced forms that read namespace `default`.
 */
import type Router from '@koa/router';
import { notFound } from '../../errors.js';
import type { SnapshotStore } from '../../store/types.js';
import { LEGACY, NAMESPACED, namespaceParam } from './paths.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { paginate, parsePageParams, requireLimitWhenPaging } from '../pipeline/pagination.js';
import { sendJson } from '../../http/respond.js';
import { namespaceOr404, namespacesOf } from './answer.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';
import { readCacheControl } from '../pipeline/cache-control.js';

export function registerManagementRoutes(outer: Router<AppState>, deps: { store: SnapshotStore }): void {
  const { store } = deps;
  const snapshotOf = (ctx: AppRouterContext) => readSnapshot(ctx, store, ctx.state.query.get('reference'));
  // A read of a pinned commit named in the URL never changes: its answer says so (pipeline/cache-control.ts).
  const router = {
    get(path: string, handler: (ctx: AppRouterContext) => Promise<void>) {
      outer.get(path, async (ctx) => {
        await handler(ctx);
        const cacheControl = readCacheControl(store, ctx.state.query, ctx.state.authentication !== undefined, undefined);
        if (cacheControl !== undefined) ctx.set('Cache-Control', cacheControl);
      });
    },
  };

  router.get('/api/v1/namespaces', async (ctx) => {
    const page = paginate(namespacesOf(await snapshotOf(ctx)), parsePageParams(ctx.state.query));
    sendJson(ctx, { namespaces: page.items, nextPageToken: page.nextPageToken, totalCount: page.totalCount });
  });

  router.get('/api/v1/namespaces/:key', async (ctx) => {
    sendJson(ctx, namespaceOr404(await snapshotOf(ctx), ctx.params.key!).namespace);
  });

  for (const prefix of [NAMESPACED, LEGACY]) {
    router.get(`${prefix}/flags`, async (ctx) => {
      const params = parsePageParams(ctx.state.query);
      requireLimitWhenPaging(params);
      const ns = namespaceOr404(await snapshotOf(ctx), namespaceParam(ctx));
      const page = paginate(ns.flags(), params);
      sendJson(ctx, { flags: page.items, nextPageToken: page.nextPageToken, totalCount: page.totalCount });
    });

    router.get(`${prefix}/flags/:key`, async (ctx) => {
      const key = namespaceParam(ctx);
      const flag = namespaceOr404(await snapshotOf(ctx), key).flag(ctx.params.key!);
      if (!flag) throw notFound(`flag "${key}/${ctx.params.key}" not found`);
      sendJson(ctx, flag);
    });

    router.get(`${prefix}/segments`, async (ctx) => {
      const params = parsePageParams(ctx.state.query);
      requireLimitWhenPaging(params);
      const ns = namespaceOr404(await snapshotOf(ctx), namespaceParam(ctx));
      const page = paginate(ns.segments(), params);
      sendJson(ctx, { segments: page.items, nextPageToken: page.nextPageToken, totalCount: page.totalCount });
    });

    router.get(`${prefix}/segments/:key`, async (ctx) => {
      const key = namespaceParam(ctx);
      const segment = namespaceOr404(await snapshotOf(ctx), key).segment(ctx.params.key!);
      if (!segment) throw notFound(`segment "${key}/${ctx.params.key}" not found`);
      sendJson(ctx, segment);
    });

    router.get(`${prefix}/flags/:flagKey/rules`, async (ctx) => {
      const params = parsePageParams(ctx.state.query);
      requireLimitWhenPaging(params);
      const ns = namespaceOr404(await snapshotOf(ctx), namespaceParam(ctx));
      const page = paginate(ns.rules(ctx.params.flagKey!), params);
      sendJson(ctx, { rules: page.items, nextPageToken: page.nextPageToken, totalCount: page.totalCount });
    });

    // Flipt looks rule and rollout ids up in the whole namespace; the flag key in the path is ignored.
    router.get(`${prefix}/flags/:flagKey/rules/:id`, async (ctx) => {
      const key = namespaceParam(ctx);
      const rule = namespaceOr404(await snapshotOf(ctx), key).rule(ctx.params.id!);
      if (!rule) throw notFound(`rule "${key}/${ctx.params.id}" not found`);
      sendJson(ctx, rule);
    });
  }

  // Rollouts exist only on namespaced routes.
  router.get(`${NAMESPACED}/flags/:flagKey/rollouts`, async (ctx) => {
    const params = parsePageParams(ctx.state.query);
    const ns = namespaceOr404(await snapshotOf(ctx), namespaceParam(ctx));
    const page = paginate(ns.rollouts(ctx.params.flagKey!), params);
    // `rules` is what Flipt's clients read; `rollouts` is what the interface (§2.14) names.
    sendJson(ctx, {
      rules: page.items,
      rollouts: page.items,
      nextPageToken: page.nextPageToken,
      totalCount: page.totalCount,
    });
  });

  router.get(`${NAMESPACED}/flags/:flagKey/rollouts/:id`, async (ctx) => {
    const key = namespaceParam(ctx);
    const rollout = namespaceOr404(await snapshotOf(ctx), key).rollout(ctx.params.id!);
    if (!rollout) throw notFound(`rollout "${key}/${ctx.params.id}" not found`);
    sendJson(ctx, rollout);
  });
}
