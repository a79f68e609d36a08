/**
 * What every object-store provider needs when it talks HTTP to a bucket service, so s3.ts and
 * azblob.ts behave alike: prefixes as folders, entity tags without quotes (services quote them in
 * some answers and not in others), bounded body reads (never more than the listed size), the
 * network error code under an SDK's wrapper, and a host for messages (never user info or a query,
 * which may carry a credential).
 */
import { trimCharacter } from '../../text.js';
import { ObjectStoreError } from './provider.js';

/** `prod`, `/prod/`, `prod/` → `prod/`; `` and `/` → ``. */
export function normalizePrefix(prefix: string | undefined): string {
  const trimmed = trimCharacter(prefix ?? '', '/');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** `host[:port]` of an endpoint URL, without user info or path (for messages). */
export function endpointHost(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return '(invalid endpoint)';
  }
}

/**
 * The body, refusing an object that announces (Content-Length) or sends more than `maxBytes`, the
 * size the listing gave: a service cannot make us buffer more than it listed.
 */
export async function readCapped(body: AsyncIterable<Uint8Array> & { destroy?: () => void }, announced: number | undefined, maxBytes: number | undefined, where: string): Promise<Uint8Array> {
  const refuse = (size: string) => {
    body.destroy?.();
    return new ObjectStoreError('changed', `${where} is ${size} bytes, more than the ${maxBytes} bytes listed; the next poll reads the new listing`);
  };
  if (maxBytes !== undefined && announced !== undefined && announced > maxBytes) throw refuse(String(announced));
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (maxBytes !== undefined && total > maxBytes) throw refuse(`over ${maxBytes}`);
    chunks.push(chunk);
  }
  const joined = Buffer.concat(chunks, total);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

/** The object is not the one listed any more (replaced, or bigger than listed). */
export function changed(where: string): ObjectStoreError {
  return new ObjectStoreError('changed', `${where} changed after it was listed; the next poll reads the new version`);
}

/** `"abc"`, `W/"abc"` → `abc`. */
export function unquoteEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** ECONNREFUSED, ENOTFOUND... of a failed connection (also inside an AggregateError from happy eyeballs). */
export function networkCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[]; cause?: unknown };
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e.code;
  for (const inner of e.errors ?? []) {
    const c = networkCode(inner);
    if (c !== undefined) return c;
  }
  return e.cause !== undefined && e.cause !== err ? networkCode(e.cause) : undefined;
}
