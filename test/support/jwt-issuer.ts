/**
 * A real OIDC-discovery + JWKS issuer on loopback for the cluster and JWT tests (typed port of
 * ../shared/tools/jwt-issuer.mjs, signing with jose): what a Kubernetes API server publishes for
 * service-account tokens (same paths), or any JWT issuer.
 *
 *   GET /.well-known/openid-configuration   {issuer, jwks_uri, id_token_signing_alg_values_supported}
 *   GET /openid/v1/jwks                     {keys: [public JWKs of every algorithm, newest first]}
 *
 * Options: HTTPS with a given certificate (test/support/git-tls.ts), a bearer token the two routes
 * require (as a cluster that does not publish discovery anonymously), and an `issuer` claim value
 * other than the URL (real clusters say https://kubernetes.default.svc.cluster.local).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { Teardown } from './git-repo.js';

export type IssuerAlg = 'RS256' | 'RS512' | 'ES256' | 'ES512' | 'EdDSA' | 'PS256';

interface SigningKey {
  readonly kid: string;
  readonly alg: IssuerAlg;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly jwk: JWK;
}

export interface JwtIssuerOptions {
  /** Algorithms to hold a key for (default RS256); the first is the default for `sign`. */
  algs?: IssuerAlg[];
  /** Serve HTTPS with this certificate. */
  tls?: { key: string; cert: string };
  /** When set, both routes answer 401 unless `Authorization: Bearer <requireBearer>` is sent. */
  requireBearer?: string;
  /** The `issuer` published and put in tokens (default: the server's own URL). */
  issuer?: string;
  /** `id_token_signing_alg_values_supported` (default: `algs`). */
  advertisedAlgs?: string[];
  /** The `jwks_uri` the discovery document names (default: this server's key set). */
  publishedJwksUri?: string;
}

export interface SignOptions {
  alg?: IssuerAlg;
  /** Seconds since the epoch used as "now" (tests run on a fake clock). */
  now: number;
  expiresIn?: number;
  /** Seconds after `now` the token becomes valid. */
  notBefore?: number;
  /** Leave `exp` out. */
  noExp?: boolean;
  /** A `kid` header other than the key's. */
  kid?: string;
}

export interface JwtIssuer {
  /** The base URL (`discovery_url`). */
  readonly url: string;
  /** The issuer published and put in tokens. */
  readonly issuer: string;
  readonly jwksUri: string;
  readonly stats: { jwksHits: number; discoveryHits: number; refused: number };
  /** While true, the JWKS route answers 500 (discovery still works). */
  jwksDown: boolean;
  sign(claims: JWTPayload, opts: SignOptions): Promise<string>;
  signServiceAccount(opts: { now: number; namespace?: string; name?: string; pod?: string; audience?: string; expiresIn?: number; alg?: IssuerAlg }): Promise<string>;
  /** A token with `alg: none`. */
  signNone(claims: JWTPayload, now: number): string;
  /** HS256 with the given secret (e.g. the public key's PEM, the classic confusion attack). */
  signHmac(claims: JWTPayload, secret: Uint8Array, now: number): Promise<string>;
  /** SPKI PEM of the newest key of `alg`. */
  publicKeyPem(alg?: IssuerAlg): Promise<string>;
  /** A new key per algorithm, published first; old ones stay unless `dropOld`. */
  rotate(opts?: { dropOld?: boolean }): Promise<void>;
  /** Keys of `alg` the JWKS does not publish (an unknown kid). */
  unpublishedKey(alg?: IssuerAlg): Promise<{ sign(claims: JWTPayload, opts: SignOptions): Promise<string> }>;
  close(): Promise<void>;
}

async function newKey(alg: IssuerAlg): Promise<SigningKey> {
  const kid = randomBytes(8).toString('hex');
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

function signWith(key: SigningKey, issuer: string, claims: JWTPayload, opts: SignOptions): Promise<string> {
  const now = opts.now;
  const payload: JWTPayload = {
    iss: issuer,
    iat: now,
    nbf: now + (opts.notBefore ?? 0),
    ...(opts.noExp ? {} : { exp: now + (opts.expiresIn ?? 300) }),
    jti: randomUUID(),
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, typ: 'JWT', kid: opts.kid ?? key.kid }).sign(key.privateKey);
}

export async function startJwtIssuer(t: Teardown, opts: JwtIssuerOptions = {}): Promise<JwtIssuer> {
  const algs = opts.algs ?? ['RS256'];
  let keys: SigningKey[] = await Promise.all(algs.map(newKey));
  const stats = { jwksHits: 0, discoveryHits: 0, refused: 0 };
  let url = '';
  const issuerOf = () => opts.issuer ?? url;

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=0' });
      res.end(JSON.stringify(body));
    };
    if (opts.requireBearer !== undefined && req.headers.authorization !== `Bearer ${opts.requireBearer}`) {
      stats.refused++;
      return json(401, { kind: 'Status', message: 'Unauthorized', code: 401 });
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/.well-known/openid-configuration') {
      stats.discoveryHits++;
      return json(200, {
        issuer: issuerOf(),
        jwks_uri: opts.publishedJwksUri ?? `${url}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: opts.advertisedAlgs ?? algs,
      });
    }
    if (path === '/openid/v1/jwks') {
      stats.jwksHits++;
      if (api.jwksDown) return json(500, { message: 'down' });
      return json(200, { keys: keys.map((k) => k.jwk) });
    }
    json(404, { message: 'not found' });
  };
  const server = opts.tls ? createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);

  const newest = (alg: IssuerAlg = algs[0]!): SigningKey => {
    const k = keys.find((key) => key.alg === alg);
    if (k === undefined) throw new Error(`the issuer holds no ${alg} key`);
    return k;
  };

  const api: JwtIssuer = {
    url,
    get issuer() {
      return issuerOf();
    },
    jwksUri: `${url}/openid/v1/jwks`,
    stats,
    jwksDown: false,
    sign: (claims, o) => signWith(newest(o.alg), issuerOf(), claims, o),
    signServiceAccount: ({ now, namespace = 'default', name = 'default', pod = 'app-0', audience = 'vexil', expiresIn = 3600, alg }) =>
      signWith(
        newest(alg),
        issuerOf(),
        {
          sub: `system:serviceaccount:${namespace}:${name}`,
          aud: [audience],
          'kubernetes.io': { namespace, serviceaccount: { name, uid: randomUUID() }, pod: { name: pod, uid: randomUUID() } },
        },
        { now, expiresIn },
      ),
    signNone: (claims, now) => new UnsecuredJWT({ iss: issuerOf(), iat: now, exp: now + 300, ...claims }).encode(),
    signHmac: (claims, secret, now) =>
      new SignJWT({ iss: issuerOf(), iat: now, exp: now + 300, ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: newest().kid }).sign(secret),
    publicKeyPem: (alg) => exportSPKI(newest(alg).publicKey),
    async rotate({ dropOld = false } = {}) {
      const fresh = await Promise.all(algs.map(newKey));
      keys = dropOld ? fresh : [...fresh, ...keys];
    },
    async unpublishedKey(alg) {
      const key = await newKey(alg ?? algs[0]!);
      return { sign: (claims, o) => signWith(key, issuerOf(), claims, o) };
    },
    close,
  };
  return api;
}
