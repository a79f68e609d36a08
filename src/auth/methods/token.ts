/**
 * The static token method (`POST /auth/v1/method/token`, the bootstrap token). Request fields as
 * Flipt reads them: `name`, `description`, optional `expiresAt` (RFC 3339), optional
 * `namespaceKey`, optional `metadata` (string values); camelCase or snake_case.
 */
import { field, invalidField, isPlainObject, optionalString } from '../../http/fields.js';
import { TOKEN_METADATA } from '../types.js';

export interface TokenRequest {
  name: string;
  description: string;
  namespaceKey: string;
  expiresAt?: number;
  metadata: Record<string, string>;
}

/** RFC 3339 as protojson accepts it: `Z` or a numeric offset, up to nanosecond fractions. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function parseTimestamp(value: string, label: string): number {
  const ms = RFC3339.test(value) ? Date.parse(value.replace(/(\.\d{3})\d+/, '$1')) : Number.NaN;
  if (Number.isNaN(ms)) throw invalidField(label, 'must be an RFC 3339 timestamp such as 2030-01-01T00:00:00Z');
  return ms;
}

export function parseTokenRequest(body: Record<string, unknown>): TokenRequest {
  const name = optionalString(body, 'name') ?? '';
  const description = optionalString(body, 'description') ?? '';
  const namespaceKey = optionalString(body, 'namespaceKey') ?? '';
  const rawExpiry = field(body, 'expiresAt');
  let expiresAt: number | undefined;
  if (rawExpiry !== undefined) {
    if (typeof rawExpiry !== 'string') throw invalidField('expiresAt', 'must be an RFC 3339 timestamp string');
    expiresAt = parseTimestamp(rawExpiry, 'expiresAt');
  }
  // Null prototype: a `__proto__` key is kept as data, like any other key.
  const metadata: Record<string, string> = Object.create(null) as Record<string, string>;
  const rawMetadata = field(body, 'metadata');
  if (rawMetadata !== undefined) {
    if (!isPlainObject(rawMetadata)) throw invalidField('metadata', 'must be an object of string values');
    for (const [k, v] of Object.entries(rawMetadata)) {
      if (typeof v !== 'string') throw invalidField(`metadata.${k}`, 'must be a string');
      metadata[k] = v;
    }
  }
  return { name, description, namespaceKey, metadata, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

/** The stored metadata: the caller's map, then the reserved keys (which always win). */
export function tokenMetadata(req: Pick<TokenRequest, 'name' | 'description' | 'namespaceKey' | 'metadata'>): Record<string, string> {
  const metadata: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, req.metadata);
  metadata[TOKEN_METADATA.name] = req.name;
  if (req.description !== '') metadata[TOKEN_METADATA.description] = req.description;
  if (req.namespaceKey !== '') metadata[TOKEN_METADATA.namespace] = req.namespaceKey;
  return metadata;
}

export const BOOTSTRAP_NAME = 'initial_bootstrap_token';
export const BOOTSTRAP_DESCRIPTION = 'Initial token created when bootstrapping authentication';
