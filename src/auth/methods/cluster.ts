/**
 * The cluster service-account method (interface §4.3, §5.3; reference §2.9):
 * `POST /auth/v1/method/cluster/serviceaccount {"service_account_token": "<jwt>"}` (and Flipt's
 * `/auth/v1/method/kubernetes/serviceaccount`, which Flipt's Go SDK calls). The projected token is
 * verified against the cluster's OIDC discovery: `{discovery_url}/.well-known/openid-configuration`
 * names the issuer and the `jwks_uri`; both are fetched over HTTPS trusting only `ca_path`, with the
 * pod's own `service_account_token_path` as bearer token (re-read on every fetch) for clusters that
 * do not publish discovery anonymously. Plain `http:` is refused for both (the token would travel
 * in clear) except to loopback addresses: `discovery_url` at start (a config rule), `jwks_uri`
 * when discovery names it (discovery fails, 503). No TokenReview call, as in Flipt.
 *
 * Checks: signature (keys from the JWKS, refetched at once on an unknown kid), algorithm among the
 * discovery's `id_token_signing_alg_values_supported` (RS256 when absent), `iss` equal to the
 * discovered issuer (real clusters are reached at another URL than their issuer), times, and the
 * audience when `audiences` is set (Flipt checks none). The answer is a client token whose record
 * (METHOD_CLUSTER) expires with the service-account token, metadata the five
 * `io.svc.auth.cluster.*` keys, always present (possibly "").
 *
 * Discovery happens on first use and is retried on the next request after a failure, so vexil
 * starts while the cluster API is briefly unreachable; a CA file that cannot be read stops the start.
 */
import type Router from '@koa/router';
import { Code, VexilError, clusterVerificationUnavailable } from '../../errors.js';
import { field, invalidField, isPlainObject } from '../../http/fields.js';
import { cleartextProblem } from '../../http/loopback.js';
import { requestBody } from '../../http/request-body.js';
import type { AppState } from '../../http/context.js';
import { sendJson } from '../../http/respond.js';
import { AUDIT_TYPES } from '../audit.js';
import { ASYMMETRIC_ALGORITHMS, createJwtVerifier, JwtRejected, type JwtVerifier } from '../jwt-verify.js';
import type { AuthService, Created } from '../service.js';
import { createTrustedFetch, type KeyFetch } from '../trusted-fetch.js';
import { authenticationJson, CLUSTER_METADATA, type Clock } from '../types.js';
import type { AuthMethod, MethodDeps } from './types.js';

export const CLUSTER_PATHS = ['/auth/v1/method/cluster/serviceaccount', '/auth/v1/method/kubernetes/serviceaccount'] as const;

/** Service-account tokens are checked with a small skew only: the record expires with the token. */
const CLUSTER_LEEWAY_SECONDS = 5;

type ClusterConfig = MethodDeps['config']['methods']['cluster'];

interface Discovery {
  issuer: string;
  jwksUri: string;
  algorithms: string[];
}

function strOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function objOf(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

/** The five metadata keys from the private `kubernetes.io` claim. */
export function clusterMetadata(claims: Readonly<Record<string, unknown>>): Record<string, string> {
  const k = objOf(claims['kubernetes.io']);
  const pod = objOf(k.pod);
  const sa = objOf(k.serviceaccount);
  return {
    [CLUSTER_METADATA.namespace]: strOf(k.namespace),
    [CLUSTER_METADATA.podName]: strOf(pod.name),
    [CLUSTER_METADATA.podUid]: strOf(pod.uid),
    [CLUSTER_METADATA.serviceAccountName]: strOf(sa.name),
    [CLUSTER_METADATA.serviceAccountUid]: strOf(sa.uid),
  };
}

async function discover(discoveryUrl: string, fetchKeys: KeyFetch): Promise<Discovery> {
  const url = `${discoveryUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const res = await fetchKeys(url);
  if (res.status !== 200) throw new Error(`discovery answered HTTP ${res.status}`);
  const doc: unknown = await res.json();
  if (!isPlainObject(doc) || typeof doc.issuer !== 'string' || typeof doc.jwks_uri !== 'string') {
    throw new Error('discovery document lacks issuer or jwks_uri');
  }
  const advertised = Array.isArray(doc.id_token_signing_alg_values_supported)
    ? doc.id_token_signing_alg_values_supported.filter((a): a is string => typeof a === 'string')
    : [];
  // The key set is fetched with the pod's token too: never over plain http beyond loopback.
  const jwksProblem = cleartextProblem(doc.jwks_uri);
  if (jwksProblem !== undefined) throw new Error(`the discovery document's jwks_uri ${JSON.stringify(doc.jwks_uri)} is refused: ${jwksProblem}`);
  const usable = advertised.filter((a) => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a));
  return { issuer: doc.issuer, jwksUri: doc.jwks_uri, algorithms: advertised.length === 0 ? ['RS256'] : usable };
}

export interface ClusterExchanger {
  exchange(serviceAccountToken: string): Promise<Created>;
}

function refused(reason: string): VexilError {
  // Flipt answers 500 here (an untyped error); a bad credential is the caller's problem: 401.
  return new VexilError(Code.Unauthenticated, `verifying service account: ${reason}`);
}

/** Verification and record creation, apart from the HTTP wiring. */
export function createClusterExchanger(config: ClusterConfig, service: AuthService, clock: Clock): ClusterExchanger {
  // Reads the CA file now: an unreadable one stops the start.
  let fetchKeys: KeyFetch;
  try {
    fetchKeys = createTrustedFetch({ caPath: config.ca_path, bearerTokenPath: config.service_account_token_path });
  } catch (err) {
    throw new Error(`authentication.methods.cluster.ca_path: ${(err as Error).message}`);
  }
  let verifier: Promise<JwtVerifier> | undefined;

  const verifierOnce = (): Promise<JwtVerifier> => {
    verifier ??= discover(config.discovery_url, fetchKeys).then((d) => {
      if (d.algorithms.length === 0) throw new Error('the cluster advertises no asymmetric signing algorithm');
      return createJwtVerifier({
        keys: { jwksUrl: d.jwksUri, fetch: fetchKeys },
        algorithms: d.algorithms,
        issuer: d.issuer,
        audiences: config.audiences,
        leewaySeconds: CLUSTER_LEEWAY_SECONDS,
        clock,
      });
    });
    // A failed discovery is forgotten, so the next request tries again.
    verifier.catch(() => (verifier = undefined));
    return verifier;
  };

  return {
    async exchange(token) {
      let verify: JwtVerifier;
      try {
        verify = await verifierOnce();
      } catch (err) {
        throw clusterVerificationUnavailable(`cluster discovery failed: ${(err as Error).message}`);
      }
      let verified;
      try {
        verified = await verify(token);
      } catch (err) {
        if (err instanceof JwtRejected && err.keysUnavailable) {
          throw clusterVerificationUnavailable(err.message);
        }
        throw refused(err instanceof JwtRejected ? err.message : 'verification failed');
      }
      return service.create({ method: 'METHOD_CLUSTER', metadata: clusterMetadata(verified.payload), expiresAt: verified.expiresAt });
    },
  };
}

export function createClusterMethod(deps: MethodDeps): AuthMethod {
  const config = deps.config.methods.cluster;
  const exchanger = config.enabled ? createClusterExchanger(config, deps.service, deps.clock) : undefined;
  return {
    method: 'METHOD_CLUSTER',
    configKey: 'cluster',
    sessionCompatible: false,
    describe: () => null,
    register(router: Router<AppState>) {
      if (exchanger === undefined) return;
      for (const path of CLUSTER_PATHS) {
        router.post(path, async (ctx) => {
          const body = await requestBody(ctx);
          if (!isPlainObject(body)) throw invalidField('service_account_token', 'the body must be a JSON object');
          const token = field(body, 'serviceAccountToken');
          if (typeof token !== 'string' || token === '') throw invalidField('service_account_token', 'must be a non-empty string');
          const created = await exchanger.exchange(token);
          ctx.state.log.info(
            { authenticationId: created.authentication.id, method: 'METHOD_CLUSTER', namespace: created.authentication.metadata[CLUSTER_METADATA.namespace] },
            'client token created',
          );
          deps.audit.record({ type: AUDIT_TYPES.login, subject: created.authentication, request: ctx.req, log: ctx.state.log });
          sendJson(ctx, { clientToken: created.clientToken, authentication: authenticationJson(created.authentication) });
        });
      }
    },
  };
}
