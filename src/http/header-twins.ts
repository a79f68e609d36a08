/**
 * Request headers that carry meaning come under two names: Flipt's `X-Flipt-<name>`, which real
 * Flipt and OpenFeature clients send, and vexil's vendor-neutral `X-Svc-<name>`. Every route
 * reads them through headerTwin, so both spellings work everywhere the same way.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { invalidArgument } from '../errors.js';

/**
 * Every name read through headerTwin. A browser page may send a header only when the CORS
 * preflight allows it, so server/pipeline/cors.ts allows both spellings of each name listed here.
 */
export const TWIN_NAMES = ['accept-server-version', 'environment', 'namespace', 'reference'] as const;
export type TwinName = (typeof TWIN_NAMES)[number];

/** Both spellings of every twin header, in lower case. */
export function twinHeaderNames(): string[] {
  return TWIN_NAMES.flatMap((name) => [`x-flipt-${name}`, `x-svc-${name}`]);
}

/**
 * The value of `X-Flipt-<name>` or `X-Svc-<name>` (`name` in lower case: `environment`,
 * `namespace`), or undefined when neither is sent. An empty value reads as absent. Both sent with
 * different values is a 400 naming the two: guessing which one the caller meant would serve the
 * wrong state silently.
 */
export function headerTwin(headers: IncomingHttpHeaders, name: TwinName): string | undefined {
  const flipt = single(headers[`x-flipt-${name}`]);
  const svc = single(headers[`x-svc-${name}`]);
  if (flipt !== undefined && svc !== undefined && flipt !== svc) {
    throw invalidArgument(`X-Flipt-${capitalised(name)} "${flipt}" and X-Svc-${capitalised(name)} "${svc}" disagree: send one of them`);
  }
  return svc ?? flipt;
}

/** Node joins repeated custom headers with ", "; a header that came as an array is read joined too. */
function single(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text === '' ? undefined : text;
}

function capitalised(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
