/** The JSON body of a Koa request, for routes that take one. */
import { readJson } from './body.js';
import type { AppRouterContext } from './context.js';

/** The body, read once per request (authentication may have read it before routing). */
export function requestBody(ctx: AppRouterContext): Promise<unknown> {
  return (ctx.state.jsonBody ??= readJson(ctx.req));
}
