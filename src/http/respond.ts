/** Writes success bodies: JSON, indented under `?pretty`. (Error bodies: server/pipeline/errors.ts.) */
import type { ParameterizedContext } from 'koa';
import type { AppState } from './context.js';

export function sendJson(ctx: ParameterizedContext<AppState>, body: unknown, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = ctx.state.pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
}

/** A success body already serialised as JSON (the evaluation core writes its own text). */
export function sendJsonText(ctx: ParameterizedContext<AppState>, text: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = text;
}
