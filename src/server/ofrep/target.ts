/**
 * What an OFREP evaluation reads, as both HTTP paths decide it (the bulk route of routes.ts, and the
 * single-flag hot route of hot.ts): the namespace and the reference come from headers (and
 * the query), since OFREP bodies have no place for them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config/types.js';
import { namespaceOf } from '../../evaluation/lookup.js';
import { requestReference } from '../pipeline/environments.js';
import { headerTwin } from '../../http/header-twins.js';
import { notAboutTheFlag } from './errors.js';

/** `X-Svc-Namespace` / `X-Flipt-Namespace`, else `default`; 400 when the two disagree. */
export function ofrepNamespace(headers: IncomingHttpHeaders): string {
  return namespaceOf(headerTwin(headers, 'namespace') ?? '');
}

/**
 * `X-Svc-Reference` / `X-Flipt-Reference`, else `?reference=`, else the environment of
 * `X-Svc-Environment` / `X-Flipt-Environment` (pipeline/environments.ts), else the default (undefined).
 */
export function ofrepReference(headers: IncomingHttpHeaders, query: ReadonlyMap<string, string>, environments: Config['environments']): string | undefined {
  return headerTwin(headers, 'reference') ?? requestReference(query, headers, environments);
}

/**
 * A failure of choosing or resolving the reference, as OFREP reports it: an unknown reference or
 * environment is no missing flag (400 GENERAL: errors.ts notAboutTheFlag). Returns the error, to
 * be thrown.
 */
export function referenceFailure(err: unknown): unknown {
  return notAboutTheFlag(err);
}
