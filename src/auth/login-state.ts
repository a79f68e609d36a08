/**
 * The sealed login state: what a session-compatible login (oidc, code_host) needs back at its
 * callback travels in the `svc_client_state` cookie itself, encrypted and authenticated, so any
 * process or replica with the same configuration can end a login another one started (node:cluster
 * workers, replicas behind a load balancer) and no process keeps anything per login.
 *
 * - Sealing: AES-256-GCM (node:crypto) with a random 96-bit IV per cookie; the cookie value is
 *   base64url(IV ‖ ciphertext ‖ 128-bit tag), with a fixed associated-data string naming the cookie
 *   and the format version. The plaintext is JSON holding the random state value, the method, the
 *   provider, the expiry and the method's data (PKCE verifier, nonce...): the browser can neither
 *   read it nor alter it nor make one up.
 * - The key: HKDF-SHA256 over `authentication.session.csrf.key` when set, else over the client
 *   secrets of the enabled session-compatible methods (each oidc provider's `client_secret` by
 *   provider name, then code_host's), with a fixed info string. Every process and replica of the same
 *   configuration derives the same key; another configuration (another secret) cannot open the
 *   cookie. Changing those secrets ends the logins in progress (the user clicks "log in" again).
 * - Unsealing checks the size before decoding or decrypting anything, so a huge cookie costs nothing.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { AuthenticationConfig } from '../config/types.js';
import { METHODS, type Method } from './types.js';

/** HKDF info: ties the derived key to this one use (the CSRF token uses csrf.key differently). */
const KEY_INFO = 'vexil svc_client_state AES-256-GCM v1';
/** GCM associated data: a sealed value only opens as this cookie in this format. */
const AAD = Buffer.from('svc_client_state v1', 'utf8');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/**
 * Longest cookie value accepted (and produced): browsers keep about 4,096 bytes per cookie, name
 * and attributes included. Checked before anything is decoded.
 */
export const MAX_SEALED_CHARS = 3_072;

/** What a method keeps for the callback of one login (verifier, nonce...). */
export type LoginData = Readonly<Record<string, string>>;

/** The plaintext of one sealed login state. */
export interface LoginState {
  /** The random `state` value the provider sends back in the callback's query. */
  state: string;
  method: Method;
  /** The provider name for OIDC, '' for a method without providers. */
  provider: string;
  /** ms since the epoch (vexil's clock): `session.state_lifetime` after the login began. */
  expiresAt: number;
  data: LoginData;
}

/**
 * The sealing key of this configuration. Without csrf.key and without any session-compatible
 * method there is no login to seal: a random key then (never used for a cookie another process reads).
 */
export function loginStateKey(auth: AuthenticationConfig): Buffer {
  const csrfKey = auth.session.csrf.key;
  let material: string;
  if (csrfKey !== undefined && csrfKey !== '') {
    material = JSON.stringify(['csrf.key', csrfKey]);
  } else {
    // Labelled and in a fixed order, so the same secrets always give the same bytes.
    const secrets: Array<[string, string]> = [];
    if (auth.methods.oidc.enabled) {
      for (const name of Object.keys(auth.methods.oidc.providers).sort()) {
        secrets.push([`oidc.providers.${name}.client_secret`, auth.methods.oidc.providers[name]!.client_secret]);
      }
    }
    const codeHostSecret = auth.methods.code_host.client_secret;
    if (auth.methods.code_host.enabled && codeHostSecret !== undefined) secrets.push(['code_host.client_secret', codeHostSecret]);
    if (secrets.every(([, secret]) => secret === '')) return randomBytes(KEY_BYTES);
    material = JSON.stringify(secrets);
  }
  return Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), Buffer.alloc(0), KEY_INFO, KEY_BYTES));
}

/** The cookie value carrying `login`; throws when it would not fit in a cookie (config far too long). */
export function sealLoginState(key: Buffer, login: LoginState): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(AAD);
  const plaintext = JSON.stringify({ s: login.state, m: login.method, p: login.provider, e: login.expiresAt, d: login.data });
  const sealed = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url');
  if (sealed.length > MAX_SEALED_CHARS) {
    throw new Error(`the login state cookie would be ${sealed.length} characters, over ${MAX_SEALED_CHARS}: shorten redirect_address`);
  }
  return sealed;
}

/**
 * The login state sealed in `cookie` under `key`, or undefined when it is not one: too long, not
 * base64url, too short, altered, sealed under another key, or not the expected shape. Expiry is
 * the caller's check (it has the clock).
 */
export function unsealLoginState(key: Buffer, cookie: string): LoginState | undefined {
  if (cookie.length > MAX_SEALED_CHARS || !/^[A-Za-z0-9_-]+$/.test(cookie)) return undefined;
  const bytes = Buffer.from(cookie, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES + 2) return undefined;
  let plaintext: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(AAD);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    plaintext = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined; // authentication failed: altered, or another key
  }
  return parseLoginState(plaintext);
}

function parseLoginState(plaintext: string): LoginState | undefined {
  let v: unknown;
  try {
    v = JSON.parse(plaintext);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { s, m, p, e, d } = v as Record<string, unknown>;
  if (typeof s !== 'string' || typeof p !== 'string' || typeof e !== 'number' || !(METHODS as readonly unknown[]).includes(m)) return undefined;
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  const data: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(d)) {
    if (typeof value !== 'string') return undefined;
    data[name] = value;
  }
  return { state: s, method: m as Method, provider: p, expiresAt: e, data };
}
