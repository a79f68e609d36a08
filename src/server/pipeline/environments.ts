/**
 * Flipt v2's environments, as vexil reads them: an environment is a name for a reference.
 * `environments.<name>.reference` in the config maps a name; `default` needs no entry (it is the
 * default reference, as in Flipt v2, where a lone environment is called `default`). Any other
 * name is 404: an environment is a deployment's name, not a branch's, so an unknown one is a
 * misconfigured client to report, never a reference to guess (`?reference=` names references).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { notFound } from '../../errors.js';
import type { Config } from '../../config/types.js';
import { headerTwin } from '../../http/header-twins.js';

export const DEFAULT_ENVIRONMENT = 'default';

/** The reference environment `name` serves; undefined = the default reference. */
export function environmentReference(environments: Config['environments'], name: string): string | undefined {
  // Own properties only: a name such as `constructor` must not reach Object.prototype.
  const mapped = Object.hasOwn(environments, name) ? environments[name] : undefined;
  if (mapped !== undefined) return mapped.reference;
  if (name === DEFAULT_ENVIRONMENT) return undefined;
  throw notFound(`environment "${name}" not found: map it to a reference under environments.${name}.reference in the configuration`);
}

/**
 * The reference a request names: `?reference=` when given (not empty), else the environment of
 * the `X-Flipt-Environment` / `X-Svc-Environment` header, else the default (undefined).
 */
export function requestReference(
  query: ReadonlyMap<string, string>,
  headers: IncomingHttpHeaders,
  environments: Config['environments'],
): string | undefined {
  const reference = query.get('reference');
  if (reference !== undefined && reference !== '') return reference;
  const environment = headerTwin(headers, 'environment');
  return environment === undefined ? undefined : environmentReference(environments, environment);
}
