/**
 * OFREP, the OpenFeature Remote Evaluation Protocol (flipt-auth-and-clients.md §4b), so any
 * OpenFeature SDK with an OFREP provider evaluates against vexil:
 *
 *   GET  /ofrep/v1/configuration          what the provider may assume (ofrep/configuration.ts)
 *   POST /ofrep/v1/evaluate/flags/{key}   one flag: {"context": {...}} (ofrep/request.ts)
 *   POST /ofrep/v1/evaluate/flags         several flags, with ETag / If-None-Match (ofrep/bulk.ts),
 *                                         and `eventStreams` (ofrep/event-streams.ts; the stream
 *                                         itself is served by streams/routes.ts)
 *
 * A bulk request a change event triggered carries `?flagConfigEtag=<the event's ETag>` (OFREP
 * ADR-0008). When that is not the state served here (the namespace's ETag), the client heard of it
 * from a replica or worker that loaded it first: the request waits for this process to serve it
 * (ofrep/announced-state.ts, bounded) and is answered from it. It is 304 when If-None-Match names
 * the current answer and the announced state is the one served; otherwise (the state never came:
 * an older one, or a made-up tag) the answer is sent in full rather than a 304 that would say
 * "what you were told of is what you have". `flagConfigLastModified` is not used (vexil's events
 * carry none).
 *
 * The namespace is the `X-Svc-Namespace` / `X-Flipt-Namespace` header (default `default`), as the
 * body has no place for it. The reference: the `X-Svc-Reference` / `X-Flipt-Reference` header,
 * else `?reference=`, else the environment the `X-Svc-Environment` / `X-Flipt-Environment` header
 * names (pipeline/environments.ts), else the default reference. Errors are written in the OFREP schema
 * (ofrep/errors.ts, mounted in app.ts for every path under /ofrep/).
 *
 * The single-flag evaluation is a hot route (hot.ts, served by both HTTP paths from
 * server/hot-routes.ts); this file registers the configuration and the bulk evaluation.
 */
import type Router from '@koa/router';
import type { Config } from '../../config/types.js';
import type { SnapshotStore } from '../../store/types.js';
import { ifNoneMatchHits } from '../pipeline/conditional.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { bulkNamespace, bulkText } from './bulk.js';
import { ofrepConfiguration } from './configuration.js';
import { bulkEtag } from './etag.js';
import { parseOfrepBulkRequest } from './request.js';
import { eventStreamsText, streamReachable } from './event-streams.js';
import { createAnnouncedStateWaiter } from './announced-state.js';
import { snapshotEtag } from '../client-snapshot/served.js';
import { ofrepNamespace, ofrepReference, referenceFailure } from './target.js';
import { requestBody } from '../../http/request-body.js';
import { sendJson, sendJsonText } from '../../http/respond.js';
import { readSnapshot } from '../pipeline/read-snapshot.js';

export interface OfrepRoutesDeps {
  store: SnapshotStore;
  metrics: ServerMetrics;
  config: Pick<Config, 'storage' | 'environments'> & { server: Pick<Config['server'], 'max_streams' | 'stream_inactivity_delay'> };
}

export function registerOfrepRoutes(router: Router<AppState>, deps: OfrepRoutesDeps): void {
  const { store, metrics, config } = deps;
  const configuration = ofrepConfiguration(config.storage);
  // As many refetches may wait as clients can be told at once.
  const announcedStates = createAnnouncedStateWaiter({ store, maxWaiting: config.server.max_streams, registry: metrics.registry });

  const namespaceKeyOf = (ctx: AppRouterContext) => ofrepNamespace(ctx.req.headers);
  const referenceOf = (ctx: AppRouterContext) => ofrepReference(ctx.req.headers, ctx.state.query, config.environments);
  /** The request's snapshot; an unknown reference or environment is no missing flag (GENERAL). */
  const snapshotOf = async (ctx: AppRouterContext) => {
    try {
      return await readSnapshot(ctx, store, referenceOf(ctx));
    } catch (err) {
      throw referenceFailure(err);
    }
  };
  const send = (ctx: AppRouterContext, text: string) => sendJsonText(ctx, ctx.state.pretty ? JSON.stringify(JSON.parse(text), null, 2) : text);

  router.get('/ofrep/v1/configuration', (ctx) => sendJson(ctx, configuration));

  router.post('/ofrep/v1/evaluate/flags', async (ctx) => {
    const req = parseOfrepBulkRequest(await requestBody(ctx));
    const namespaceKey = namespaceKeyOf(ctx);
    let snapshot = await snapshotOf(ctx);
    let ns = bulkNamespace(snapshot, namespaceKey);
    let stateEtag = snapshotEtag(snapshot.reference, ns);
    const flagConfigEtag = ctx.state.query.get('flagConfigEtag');
    const announced = flagConfigEtag === undefined ? undefined : bareEtag(flagConfigEtag);
    if (announced !== undefined && announced !== stateEtag) {
      const later = await announcedStates.wait(snapshot.reference, ns.key, announced);
      if (later !== undefined) {
        snapshot = later;
        ctx.state.snapshot = later; // the revision header names what is answered
        ns = bulkNamespace(snapshot, namespaceKey);
        stateEtag = snapshotEtag(snapshot.reference, ns);
      }
    }
    const etag = bulkEtag(snapshot, ns, req);
    ctx.set('ETag', etag);
    const announcedServed = announced === undefined || announced === stateEtag;
    if (announcedServed && ifNoneMatchHits(ctx.req.headers['if-none-match'], etag)) {
      ctx.status = 304;
      return;
    }
    const streams =
      config.server.max_streams > 0 && streamReachable(ctx.req.headers, ctx.state.authentication !== undefined)
        ? eventStreamsText({
            reference: (referenceOf(ctx) ?? '') === '' ? undefined : snapshot.reference,
            namespace: ns.key,
            etag: stateEtag,
            inactivityDelayMs: config.server.stream_inactivity_delay,
          })
        : undefined;
    send(ctx, bulkText(snapshot, ns, req, metrics, streams));
  });
}

/** An entity tag as sent (`W/"x"`, `"x"` or `x`) without its quotes and weakness mark. */
function bareEtag(tag: string): string {
  const strong = tag.startsWith('W/') ? tag.slice(2) : tag;
  return strong.length >= 2 && strong.startsWith('"') && strong.endsWith('"') ? strong.slice(1, -1) : strong;
}
