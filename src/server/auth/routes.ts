/**
 * `/auth/v1` (interface §4.3, reference §2.2–§2.4): the method listing, static token creation,
 * the caller's own authentication, and the token records. Who may call what is decided by the
 * authentication middleware before routing, what the caller may do with records by
 * src/auth/administration.ts; these handlers only shape input and output.
 */
import type Router from '@koa/router';
import { Code, VexilError, notFound, unauthenticated } from '../../errors.js';
import { AUDIT_TYPES } from '../../auth/audit.js';
import { parseTimestamp, parseTokenRequest } from '../../auth/methods/token.js';
import type { AuthRoutesDeps } from '../../auth/setup.js';
import { METHODS, METHOD_NUMBERS, authenticationJson, type Method } from '../../auth/types.js';
import type { AuthenticationConfig } from '../../config/types.js';
import { readJsonObject } from '../../http/body.js';
import { invalidField } from '../../http/fields.js';
import { trimSlashes } from '../../http/url.js';
import { withForwardedPrefix } from '../../http/forwarded-prefix.js';
import type { AppRouterContext, AppState } from '../../http/context.js';
import { parsePageParams } from '../pipeline/pagination.js';
import { sendJson } from '../../http/respond.js';

/** `X-Forwarded-Prefix` joined in front of a path (reference §2.4). */
function prefixed(ctx: AppRouterContext, path: string): string {
  return withForwardedPrefix(ctx.get('X-Forwarded-Prefix'), path);
}

function methodListing(ctx: AppRouterContext, config: AuthenticationConfig) {
  const m = config.methods;
  const providers: Record<string, { authorize_url: string; callback_url: string }> = {};
  for (const name of Object.keys(m.oidc.providers).sort()) {
    const base = `/auth/v1/method/oidc/${encodeURIComponent(name)}`;
    providers[name] = { authorize_url: prefixed(ctx, `${base}/authorize`), callback_url: prefixed(ctx, `${base}/callback`) };
  }
  return {
    methods: [
      { method: 'METHOD_TOKEN', enabled: m.token.enabled, sessionCompatible: false, metadata: null },
      {
        method: 'METHOD_CODE_HOST',
        enabled: m.code_host.enabled,
        sessionCompatible: true,
        metadata: {
          authorize_url: prefixed(ctx, '/auth/v1/method/code_host/authorize'),
          callback_url: prefixed(ctx, '/auth/v1/method/code_host/callback'),
        },
      },
      { method: 'METHOD_OIDC', enabled: m.oidc.enabled, sessionCompatible: true, metadata: { providers } },
      { method: 'METHOD_CLUSTER', enabled: m.cluster.enabled, sessionCompatible: false, metadata: null },
      { method: 'METHOD_JWT', enabled: m.jwt.enabled, sessionCompatible: false, metadata: null },
    ],
  };
}

/** The `method` filter: an enum name or its number; METHOD_NONE / 0 / absent = every method. */
function parseMethodFilter(raw: string | undefined): Method | undefined {
  if (raw === undefined || raw === '' || raw === 'METHOD_NONE' || raw === '0') return undefined;
  if ((METHODS as readonly string[]).includes(raw)) return raw as Method;
  const byNumber = METHODS.find((m) => String(METHOD_NUMBERS[m]) === raw);
  if (byNumber) return byNumber;
  throw invalidField('method', `unknown method "${raw}" (one of METHOD_NONE, ${METHODS.join(', ')})`);
}

function parseOffset(pageToken: string): number {
  if (pageToken === '') return 0;
  if (!/^\d+$/.test(pageToken) || !Number.isSafeInteger(Number(pageToken))) {
    throw new VexilError(Code.InvalidArgument, `pageToken is not valid: ${JSON.stringify(pageToken)}`);
  }
  return Number(pageToken);
}

export function registerAuthRoutes(router: Router<AppState>, deps: AuthRoutesDeps): void {
  const { service, config, administration, audit } = deps;

  router.get('/auth/v1/method', (ctx) => {
    sendJson(ctx, methodListing(ctx, config));
  });

  if (config.methods.token.enabled) {
    router.post('/auth/v1/method/token', async (ctx) => {
      const created = await administration.createToken(ctx.state.authentication, parseTokenRequest(await readJsonObject(ctx.req)));
      ctx.state.log.info({ authenticationId: created.authentication.id, method: 'METHOD_TOKEN' }, 'client token created');
      audit.record({ type: AUDIT_TYPES.tokenCreated, subject: created.authentication, actor: ctx.state.authentication, request: ctx.req, log: ctx.state.log });
      sendJson(ctx, { clientToken: created.clientToken, authentication: authenticationJson(created.authentication) });
    });
  }

  for (const method of deps.methods) method.register?.(router);

  router.get('/auth/v1/self', (ctx) => {
    const self = ctx.state.authentication;
    if (!self) throw unauthenticated();
    sendJson(ctx, authenticationJson(self));
  });

  router.put('/auth/v1/self/expire', async (ctx) => {
    // The session cookies were already cleared by the authentication middleware.
    const self = ctx.state.authentication;
    if (!self) throw unauthenticated();
    // No or an unreadable `expiresAt` expires now, as in Flipt.
    const raw = ctx.state.query.get('expiresAt') ?? ctx.state.query.get('expires_at');
    let at = service.clock();
    if (raw !== undefined && raw !== '') {
      try {
        at = parseTimestamp(raw, 'expiresAt');
      } catch {
        at = service.clock();
      }
    }
    const changed = await administration.expireSelf(self, at);
    ctx.state.log.info({ authenticationId: self.id, expiresAt: new Date(at).toISOString() }, 'authentication expired by its holder');
    if (changed !== undefined) {
      // Expiring now is a logout (what the UI's "Log out" sends); a later time only shortens the credential.
      const type = at <= service.clock() ? AUDIT_TYPES.logout : AUDIT_TYPES.expiryShortened;
      audit.record({ type, subject: changed, actor: self, request: ctx.req, log: ctx.state.log });
    }
    sendJson(ctx, {});
  });

  router.get('/auth/v1/tokens', async (ctx) => {
    const method = parseMethodFilter(ctx.state.query.get('method'));
    const page = parsePageParams(ctx.state.query);
    const result = await administration.list(ctx.state.authentication, {
      ...(method ? { method } : {}),
      limit: page.limit,
      offset: parseOffset(page.pageToken),
    });
    sendJson(ctx, { authentications: result.authentications.map(authenticationJson), nextPageToken: result.nextPageToken });
  });

  router.get('/auth/v1/tokens/:id', async (ctx) => {
    const a = await administration.get(ctx.state.authentication, ctx.params.id!);
    if (!a) throw notFound('getting authentication by token: resource not found');
    sendJson(ctx, authenticationJson(a));
  });

  router.delete('/auth/v1/tokens/:id', async (ctx) => {
    const deleted = await administration.delete(ctx.state.authentication, ctx.params.id!);
    if (deleted !== undefined) {
      ctx.state.log.info({ authenticationId: deleted.id }, 'authentication deleted');
      audit.record({ type: AUDIT_TYPES.tokenDeleted, subject: deleted, actor: ctx.state.authentication, request: ctx.req, log: ctx.state.log });
    }
    sendJson(ctx, {});
  });
}
