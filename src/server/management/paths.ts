/**
 * The two forms of Flipt's `/api/v1` management paths, shared by the read routes
 * (routes.ts) and the refused writes (write-routes.ts): the namespaced form, and the
 * legacy unnamespaced one that addresses namespace `default`.
 */
import type { AppRouterContext } from '../../http/context.js';

export const NAMESPACED = '/api/v1/namespaces/:namespaceKey';
export const LEGACY = '/api/v1';

/** The namespace a route addresses: its `:namespaceKey`, or `default` on legacy routes. */
export function namespaceParam(ctx: AppRouterContext): string {
  return ctx.params.namespaceKey ?? 'default';
}
