/**
 * Push webhooks: `POST /hooks/github`, `/hooks/gitlab`, `/hooks/gitea`, `/hooks/generic` and
 * `/hooks/registry`. Public paths (src/auth/scope.ts): a delivery is authenticated by its own
 * signature or token, and a route exists only when its secret is configured (404 otherwise).
 *
 * Per delivery, in this order, each step before any work of the next: the body is read up to
 * MAX_WEBHOOK_BODY_BYTES (413 beyond, from Content-Length before reading and counted while
 * reading); the signature or token is checked in constant time (401, nothing else done); the
 * body is parsed (400); a delivery id already received is refused (409; a registry's, which it
 * resends until answered 2xx, is acknowledged and ignored); then the push is mapped
 * to the references the store tracks and a refresh of those is asked for (store.requestRefresh:
 * coalesced, at most one look at the backend a second per reference), and the delivery is
 * answered 202 without waiting for it. A push to a reference not tracked, to a commit already
 * served, or any other event is answered 202 `ignored`; a GitHub ping 200 `pong`.
 *
 * The answer's shape and what a push asks to refresh: answer.ts.
 */
import type Router from '@koa/router';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { Code, VexilError, toVexilError } from '../../errors.js';
import { readRawBody } from '../../http/body.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { MAX_WEBHOOK_BODY_BYTES } from '../../http/limits.js';
import { sendJson } from '../../http/respond.js';
import type { SnapshotStore } from '../../store/types.js';
import { createRecentDeliveries } from './deliveries.js';
import { registryDelivery, type ServedRepository } from './registry-events.js';
import { answerPush, ignored, type Answer } from './answer.js';
import { genericDelivery, giteaDelivery, githubDelivery, gitlabDelivery, type Delivery, type IncomingHeaders } from './request.js';
import type { HookProvider, WebhookSecrets } from './secrets.js';

export interface HookDeps {
  readonly store: SnapshotStore;
  readonly secrets: WebhookSecrets;
  readonly logger: Logger;
  readonly registry: Registry;
  /** What the OCI backend serves (storage.type oci), for `/hooks/registry`. */
  readonly served?: ServedRepository;
}

export function registerHookRoutes(router: Router<AppState>, deps: HookDeps): void {
  const { store, secrets, logger } = deps;
  if (Object.keys(secrets).length === 0) return; // no hook configured: no route, no metric
  const recent = createRecentDeliveries();
  const deliveries = new Counter({
    name: 'vexil_webhook_deliveries_total',
    help: 'Push webhook deliveries by sender and outcome (accepted, ignored, pong, duplicate, unauthenticated, invalid).',
    labelNames: ['sender', 'outcome'] as const,
    registers: [deps.registry],
  });

  const parsers: Partial<Record<HookProvider, (secret: Buffer, headers: IncomingHeaders, body: Buffer) => Delivery>> = {
    github: githubDelivery,
    gitlab: gitlabDelivery,
    gitea: giteaDelivery,
    generic: genericDelivery,
    ...(deps.served !== undefined ? { registry: (s, h, b) => registryDelivery(s, h, b, deps.served as ServedRepository) } : {}),
  };

  for (const provider of Object.keys(parsers) as HookProvider[]) {
    const secret = secrets[provider];
    const parse = parsers[provider];
    if (secret === undefined || parse === undefined) continue;
    router.post(`/hooks/${provider}`, async (ctx: AppRouterContext) => {
      let answer: Answer;
      let delivery: Delivery;
      try {
        const body = await readRawBody(ctx.req, MAX_WEBHOOK_BODY_BYTES);
        delivery = parse(secret, ctx.req.headers, body);
        if (delivery.id !== undefined && !recent.first(provider, delivery.id)) {
          const message = `delivery ${delivery.id} was already received`;
          // A registry resends an envelope until it gets a 2xx: its repeats are acknowledged.
          if (provider === 'registry') delivery = { event: { kind: 'ignored', reason: message } };
          else throw new VexilError(Code.AlreadyExists, message);
        }
      } catch (err) {
        const e = toVexilError(err);
        const outcome = e.code === Code.Unauthenticated ? 'unauthenticated' : e.code === Code.AlreadyExists ? 'duplicate' : 'invalid';
        deliveries.inc({ sender: provider, outcome });
        throw e;
      }
      const event = delivery.event;
      if (event.kind === 'ping') answer = { status: 'pong', references: [], all: false, reason: '' };
      else if (event.kind === 'ignored') answer = ignored(event.reason);
      else answer = answerPush(store, event);
      const requestRefresh = store.requestRefresh?.bind(store);
      if (answer.status === 'accepted' && requestRefresh === undefined) throw new VexilError(Code.Unimplemented, 'this storage cannot be refreshed');
      deliveries.inc({ sender: provider, outcome: answer.status });

      if (answer.status === 'accepted' && requestRefresh !== undefined) {
        const references = answer.all ? undefined : answer.references;
        logger.info({ sender: provider, delivery: delivery.id, references: references ?? 'all' }, 'webhook: refresh asked');
        requestRefresh(references).catch((err: unknown) => logger.warn({ err, sender: provider, references }, 'webhook refresh failed'));
      } else {
        logger.debug({ sender: provider, delivery: delivery.id, status: answer.status, reason: answer.reason }, 'webhook: nothing to refresh');
      }
      sendJson(ctx, answer, answer.status === 'pong' ? 200 : 202);
    });
  }
}
