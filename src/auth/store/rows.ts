/** Decoding stored columns and naming locks, shared by the SQLite and PostgreSQL stores. */
import { METHODS, type Method } from '../types.js';

export function toMethod(value: string): Method {
  if ((METHODS as readonly string[]).includes(value)) return value as Method;
  throw new Error(`authentication store holds an unknown method "${value}"`);
}

export function parseMetadata(text: string): Record<string, string> {
  const parsed: unknown = JSON.parse(text);
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return out;
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The cleanup lease row of a method (Flipt names its lock the same way). */
export function lockName(method: Method): string {
  return `cleanup_auth_${method}`;
}
