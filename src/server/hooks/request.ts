/**
 * One webhook delivery, per sender: who it is from (its signature or token checked first, before
 * the body is parsed), which delivery it is (the sender's delivery id, for deduplication) and
 * what it asks for (a ping, a push to a Git reference, every reference, or nothing vexil acts on).
 * What the senders send is described in docs/webhooks.md:
 *
 *   github   X-Hub-Signature-256: sha256=<hex HMAC>  X-GitHub-Event (ping, push)  X-GitHub-Delivery
 *            body JSON, or a form whose `payload` field is the JSON (GitHub's two content types)
 *   gitlab   X-Gitlab-Token: <token>  X-Gitlab-Event (Push Hook, Tag Push Hook)  X-Gitlab-Event-UUID
 *   gitea    X-Gitea-Signature or X-Forgejo-Signature: <hex HMAC>  X-Gitea-Event / X-Forgejo-Event (push)
 *            X-Gitea-Delivery / X-Forgejo-Delivery
 *   generic  X-Vexil-Signature: sha256=<hex HMAC>  body {"reference": "<name>"} (absent: every reference)
 *
 * A push names a full Git ref (`refs/heads/main`, `refs/tags/v1`); `after` is the commit it now
 * points at (all zeros when the ref was deleted). Errors: 401 for a bad or missing signature, 400
 * for a body that is not what the sender documents. The registry's envelope is registry-events.ts.
 */
import { Code, VexilError, invalidArgument } from '../../errors.js';
import { asJsonObject, parseJsonBytes } from '../../http/body.js';
import { hmacMatches, singleHeader, tokenMatches } from './signature.js';

export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

export type HookEvent =
  | { readonly kind: 'ping' }
  /** `gitRef` a full ref name; undefined: every tracked reference. */
  | { readonly kind: 'push'; readonly gitRef?: string; readonly reference?: string; readonly after?: string }
  | { readonly kind: 'ignored'; readonly reason: string };

export interface Delivery {
  /** The sender's delivery id, when it sends one. */
  readonly id?: string;
  readonly event: HookEvent;
}

/** A delivery whose signature or token does not match: 401, and nothing else is done. */
export function badSignature(header: string): VexilError {
  return new VexilError(Code.Unauthenticated, `missing or invalid ${header}`);
}

const COMMIT_ID = /^[0-9a-f]{40}$/;
/** Longest delivery id kept for deduplication (GitHub's and Gitea's are UUIDs). */
const MAX_DELIVERY_ID_LENGTH = 128;

function deliveryId(headers: IncomingHeaders, ...names: string[]): string | undefined {
  for (const name of names) {
    const id = singleHeader(headers[name])?.trim();
    if (id !== undefined && id !== '') return id.length <= MAX_DELIVERY_ID_LENGTH ? id : undefined;
  }
  return undefined;
}

function jsonObject(body: Buffer): Record<string, unknown> {
  return asJsonObject(parseJsonBytes(body));
}

/** `ref` and `after` of a Git host's push payload. */
function gitPush(payload: Record<string, unknown>): HookEvent {
  const ref = payload.ref;
  if (typeof ref !== 'string' || ref === '') throw invalidArgument('invalid push payload: "ref" must be a non-empty string');
  const after = payload.after;
  if (after !== undefined && after !== null && typeof after !== 'string') throw invalidArgument('invalid push payload: "after" must be a string');
  return { kind: 'push', gitRef: ref, ...(typeof after === 'string' && COMMIT_ID.test(after) ? { after } : {}) };
}

/** GitHub: JSON, or `application/x-www-form-urlencoded` with the JSON in the `payload` field. */
function githubPayload(headers: IncomingHeaders, body: Buffer): Record<string, unknown> {
  const type = singleHeader(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return jsonObject(body);
  const payload = new URLSearchParams(body.toString('utf8')).get('payload');
  if (payload === null) throw invalidArgument('invalid form body: no "payload" field');
  return jsonObject(Buffer.from(payload, 'utf8'));
}

export function githubDelivery(secret: Buffer, headers: IncomingHeaders, body: Buffer): Delivery {
  if (!hmacMatches(secret, body, singleHeader(headers['x-hub-signature-256']), 'sha256=')) throw badSignature('X-Hub-Signature-256');
  const id = deliveryId(headers, 'x-github-delivery');
  const withId = (event: HookEvent): Delivery => (id !== undefined ? { id, event } : { event });
  const event = singleHeader(headers['x-github-event']);
  if (event === 'ping') return withId({ kind: 'ping' });
  if (event !== 'push') return withId({ kind: 'ignored', reason: `event "${event ?? ''}" is not a push` });
  return withId(gitPush(githubPayload(headers, body)));
}

const GITLAB_PUSH_EVENTS = new Set(['Push Hook', 'Tag Push Hook']);

export function gitlabDelivery(token: Buffer, headers: IncomingHeaders, body: Buffer): Delivery {
  if (!tokenMatches(token, singleHeader(headers['x-gitlab-token']))) throw badSignature('X-Gitlab-Token');
  const id = deliveryId(headers, 'x-gitlab-event-uuid');
  const withId = (event: HookEvent): Delivery => (id !== undefined ? { id, event } : { event });
  const event = singleHeader(headers['x-gitlab-event']);
  if (event === undefined || !GITLAB_PUSH_EVENTS.has(event)) return withId({ kind: 'ignored', reason: `event "${event ?? ''}" is not a push` });
  return withId(gitPush(jsonObject(body)));
}

export function giteaDelivery(secret: Buffer, headers: IncomingHeaders, body: Buffer): Delivery {
  // Forgejo sends both headers (the same digest); Gitea only its own.
  const signature = singleHeader(headers['x-gitea-signature']) ?? singleHeader(headers['x-forgejo-signature']);
  if (!hmacMatches(secret, body, signature, '')) throw badSignature('X-Gitea-Signature');
  const id = deliveryId(headers, 'x-gitea-delivery', 'x-forgejo-delivery');
  const withId = (event: HookEvent): Delivery => (id !== undefined ? { id, event } : { event });
  const event = singleHeader(headers['x-gitea-event']) ?? singleHeader(headers['x-forgejo-event']);
  if (event !== 'push') return withId({ kind: 'ignored', reason: `event "${event ?? ''}" is not a push` });
  return withId(gitPush(jsonObject(body)));
}

export function genericDelivery(secret: Buffer, headers: IncomingHeaders, body: Buffer): Delivery {
  if (!hmacMatches(secret, body, singleHeader(headers['x-vexil-signature']), 'sha256=')) throw badSignature('X-Vexil-Signature');
  const payload = jsonObject(body);
  const reference = payload.reference;
  if (reference === undefined || reference === null) return { event: { kind: 'push' } };
  if (typeof reference !== 'string' || reference === '') throw invalidArgument('invalid field reference: must be a non-empty string');
  return { event: { kind: 'push', reference } };
}

/**
 * The names the store may keep a pushed Git ref under: a branch by its short name; a tag by its
 * short name, or `refs/tags/<name>` when a branch has the same name (src/sources/git/ref-names.ts).
 * Other refs (pull request heads, notes) are never served.
 */
export function referenceCandidates(gitRef: string): string[] {
  if (gitRef.startsWith('refs/heads/')) return [gitRef.slice('refs/heads/'.length)];
  if (gitRef.startsWith('refs/tags/')) return [gitRef.slice('refs/tags/'.length), gitRef];
  return [];
}
