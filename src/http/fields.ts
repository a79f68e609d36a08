/**
 * Reading fields of a decoded JSON request the way Flipt's gateway decoder does: a field may be
 * named in lowerCamelCase or in snake_case, and JSON `null` means "not set".
 */
import { Code, VexilError } from '../errors.js';

/** Field names are a small fixed set; their snake_case twins are computed once each. */
const snakeNames = new Map<string, string>();

export function snakeCase(camel: string): string {
  let snake = snakeNames.get(camel);
  if (snake === undefined) {
    snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snakeNames.size < 1024) snakeNames.set(camel, snake);
  }
  return snake;
}

/** The value of `name` (camelCase) or its snake_case twin; undefined when absent or null. */
export function field(obj: Readonly<Record<string, unknown>>, name: string): unknown {
  let v: unknown;
  if (Object.hasOwn(obj, name)) v = obj[name];
  else {
    const snake = snakeCase(name);
    if (snake !== name && Object.hasOwn(obj, snake)) v = obj[snake];
  }
  return v === null ? undefined : v;
}

export function invalidField(name: string, problem: string): VexilError {
  return new VexilError(Code.InvalidArgument, `invalid field ${name}: ${problem}`);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * An optional string field: undefined when absent, else must be a string. `prefix` + `name`
 * labels it in the message (`requests[3].requestId`).
 */
export function optionalString(obj: Readonly<Record<string, unknown>>, name: string, prefix = ''): string | undefined {
  const v = field(obj, name);
  if (v === undefined || typeof v === 'string') return v;
  throw invalidField(`${prefix}${name}`, 'must be a string');
}
