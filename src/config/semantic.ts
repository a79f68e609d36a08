/**
 * Rules the JSON Schema cannot express (they depend on other keys), checked on a config that
 * already passed the schema. Wording follows Flipt's where Flipt has the same rule.
 */
import { parseDuration } from './duration.js';
import { parseAge } from './age.js';
import { cleartextProblem } from '../http/loopback.js';
import { parseListenAddress } from './listen-address.js';
import { originEntryProblem } from '../http/origins.js';
import { trustedProxyProblem } from '../http/client-address.js';
import type { ConfigProblem } from './errors.js';
import { emailPatternProblem } from './email-pattern.js';

// The shape is guaranteed by the schema check that runs first.
type Obj = Record<string, any>;

/** Node's default `requestTimeout` (the whole request), which the headers timeout may not exceed. */
export const REQUEST_TIMEOUT_MS = 300_000;

const METHODS_WITH_CLEANUP = ['token', 'oidc', 'code_host', 'cluster'] as const;

export function checkSemantics(raw: Obj): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, message: string) => problems.push({ path, message });
  const auth: Obj = raw.authentication;
  const methods: Obj = auth.methods;

  const sessionMethods = ['oidc', 'code_host'].filter((m) => methods[m].enabled === true);
  if (sessionMethods.length > 0 && !auth.session.domain) {
    add(
      'authentication.session.domain',
      `required when a session-compatible method is enabled (${sessionMethods.join(', ')})`,
    );
  }

  const coordination: Obj = raw.cluster.coordination;
  if (coordination.type !== 'none' && !coordination[coordination.type].url) {
    add(`cluster.coordination.${coordination.type}.url`, `required when cluster.coordination.type is ${coordination.type}`);
  }
  if (coordination.type !== 'none' && raw.storage.type === 'local') {
    add('cluster.coordination.type', 'needs a polled backend (storage.type git, oci or object): a local folder is watched by each replica itself');
  }
  if (parseDuration(coordination.backstop_interval) <= 0) add('cluster.coordination.backstop_interval', 'must be a positive duration');
  if (coordination.max_lag !== undefined && parseDuration(coordination.max_lag) <= 0) add('cluster.coordination.max_lag', 'must be a positive duration');

  const maxAge = raw.history.retention.max_age as string;
  try {
    if (parseAge(maxAge) <= 0) add('history.retention.max_age', 'must be a positive age (90d, 2160h)');
  } catch (err) {
    add('history.retention.max_age', `invalid age "${maxAge}": ${(err as Error).message} (days such as 90d, or a duration such as 2160h)`);
  }

  for (const key of ['token_lifetime', 'state_lifetime']) {
    if (parseDuration(auth.session[key]) <= 0) add(`authentication.session.${key}`, 'must be a positive duration');
  }
  for (const m of METHODS_WITH_CLEANUP) {
    for (const key of ['interval', 'grace_period']) {
      if (parseDuration(methods[m].cleanup[key]) <= 0) {
        add(`authentication.methods.${m}.cleanup.${key}`, 'must be a positive duration');
      }
    }
  }

  // A webhook secret is written inline or read from a file, not both.
  const webhooks: Obj = raw.webhooks;
  for (const [provider, key] of [['github', 'secret'], ['gitlab', 'token'], ['gitea', 'secret'], ['generic', 'secret'], ['registry', 'token']] as const) {
    const hook: Obj = webhooks[provider];
    if (hook[key] !== undefined && hook[`${key}_file`] !== undefined) add(`webhooks.${provider}`, `only one of ${key} and ${key}_file can be set`);
  }
  const registryHook: Obj = webhooks.registry;
  if ((registryHook.token !== undefined || registryHook.token_file !== undefined) && raw.storage.type !== 'oci') {
    add('webhooks.registry', 'needs storage.type oci (registry notifications refresh the OCI backend)');
  }

  const oidc: Obj = methods.oidc;
  (oidc.email_matches as string[]).forEach((pattern, i) => {
    const problem = emailPatternProblem(pattern);
    if (problem !== undefined) add(`authentication.methods.oidc.email_matches.${i}`, problem);
  });
  // email_matches reads the ID token's email claim, which providers include only for the email scope.
  if ((oidc.email_matches as string[]).length > 0) {
    for (const [name, provider] of Object.entries(oidc.providers as Record<string, Obj>)) {
      if (!(provider.scopes as string[]).includes('email')) {
        add(`authentication.methods.oidc.providers.${name}.scopes`, 'must contain email when email_matches is not empty');
      }
    }
  }

  const codeHost: Obj = methods.code_host;
  if (codeHost.enabled) {
    for (const key of ['client_id', 'client_secret', 'redirect_address']) {
      if (!codeHost[key]) add(`authentication.methods.code_host.${key}`, 'required when code_host is enabled');
    }
  }
  if ((codeHost.allowed_organizations as string[]).length > 0 && !(codeHost.scopes as string[]).includes('read:org')) {
    add('authentication.methods.code_host.scopes', 'must contain read:org when allowed_organizations is not empty');
  }
  // Teams narrow an allowed organization; a team of an organization that is not allowed would never apply.
  const allowedOrgs = new Set((codeHost.allowed_organizations as string[]).map((o) => o.toLowerCase()));
  for (const org of Object.keys(codeHost.allowed_teams as Record<string, string[]>)) {
    if (!allowedOrgs.has(org.toLowerCase())) {
      add(`authentication.methods.code_host.allowed_teams.${org}`, `the organization '${org}' was not declared in 'allowed_organizations'`);
    }
  }

  // The cluster method sends vexil's own service-account token to its discovery URL.
  const cluster: Obj = methods.cluster;
  const discoveryProblem = cluster.enabled ? cleartextProblem(cluster.discovery_url as string) : undefined;
  if (discoveryProblem !== undefined) add('authentication.methods.cluster.discovery_url', discoveryProblem);

  const jwt: Obj = methods.jwt;
  if (jwt.enabled) {
    if (jwt.jwks_url === undefined && jwt.public_key_file === undefined) {
      add('authentication.methods.jwt', 'one of jwks_url or public_key_file is required when jwt is enabled');
    } else if (jwt.jwks_url !== undefined && jwt.public_key_file !== undefined) {
      add('authentication.methods.jwt', 'only one of jwks_url or public_key_file can be set');
    }
  }

  const server: Obj = raw.server;
  // Node's advice: the headers timeout above the keep-alive timeout; Node's request timeout (5 min) above both.
  if (parseDuration(server.keep_alive_timeout) <= 0) add('server.keep_alive_timeout', 'must be a positive duration');
  if (parseDuration(server.headers_timeout) <= parseDuration(server.keep_alive_timeout)) {
    add('server.headers_timeout', 'must be longer than server.keep_alive_timeout');
  } else if (parseDuration(server.headers_timeout) > REQUEST_TIMEOUT_MS) {
    add('server.headers_timeout', 'must be at most 5m (the request timeout)');
  }
  if (server.metrics_address !== undefined) {
    const parsed = parseListenAddress(server.metrics_address as string);
    if (typeof parsed === 'string') add('server.metrics_address', parsed);
  }

  (server.trusted_proxies as string[]).forEach((entry, i) => {
    const problem = trustedProxyProblem(entry);
    if (problem !== undefined) add(`server.trusted_proxies.${i}`, problem);
  });

  const origins = raw.cors.allowed_origins as string[];
  origins.forEach((entry, i) => {
    const problem = originEntryProblem(entry, origins);
    if (problem !== undefined) add(`cors.allowed_origins.${i}`, problem);
  });
  return problems;
}
