/**
 * The signature formats of push webhooks (src/server/hooks/signature.ts, request.ts), against
 * the senders' documented examples: GitHub's HMAC-SHA256 test vector (secret "It's a Secret to
 * Everybody", payload "Hello, World!"; also what `openssl dgst -sha256 -hmac` prints), the same
 * digest bare as Gitea and Forgejo send it, GitLab's plain token, and vexil's generic header.
 */
import { createHmac } from 'node:crypto';
import tap from 'tap';
import { hmacMatches, singleHeader, tokenMatches } from '../../../src/server/hooks/signature.js';
import { genericDelivery, giteaDelivery, githubDelivery, gitlabDelivery } from '../../../src/server/hooks/request.js';

const GITHUB_SECRET = Buffer.from("It's a Secret to Everybody");
const GITHUB_PAYLOAD = Buffer.from('Hello, World!');
const GITHUB_DIGEST = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

tap.test("GitHub's documented example: sha256=<hex> over the raw body", async (t) => {
  t.equal(createHmac('sha256', GITHUB_SECRET).update(GITHUB_PAYLOAD).digest('hex'), GITHUB_DIGEST, 'node:crypto agrees with the documented digest');
  t.ok(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST}`, 'sha256='));
  t.ok(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST.toUpperCase()}`, 'sha256='), 'hex case does not matter');
  t.notOk(hmacMatches(GITHUB_SECRET, Buffer.from('Hello, World?'), `sha256=${GITHUB_DIGEST}`, 'sha256='), 'another body');
  t.notOk(hmacMatches(Buffer.from('another secret'), GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST}`, 'sha256='), 'another secret');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, GITHUB_DIGEST, 'sha256='), 'the prefix is required');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha1=${GITHUB_DIGEST}`, 'sha256='), 'another algorithm');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST.slice(0, 63)}`, 'sha256='), 'a shorter digest');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST}00`, 'sha256='), 'a longer digest');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, undefined, 'sha256='), 'no header');
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, 'sha256=', 'sha256='), 'an empty digest');
});

tap.test('Gitea and Forgejo: the same digest without a prefix', async (t) => {
  t.ok(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, GITHUB_DIGEST, ''));
  t.notOk(hmacMatches(GITHUB_SECRET, GITHUB_PAYLOAD, `sha256=${GITHUB_DIGEST}`, ''), 'a prefix is not the bare digits');
});

tap.test('tokens: equal bytes only, whatever the lengths', async (t) => {
  const secret = Buffer.from('gl-token-1234');
  t.ok(tokenMatches(secret, 'gl-token-1234'));
  t.notOk(tokenMatches(secret, 'gl-token-123'), 'a prefix');
  t.notOk(tokenMatches(secret, 'gl-token-12345'), 'longer');
  t.notOk(tokenMatches(secret, ''), 'empty');
  t.notOk(tokenMatches(secret, undefined), 'absent');
});

tap.test('a repeated header is no signature', async (t) => {
  t.equal(singleHeader(['a', 'b']), undefined);
  t.equal(singleHeader('a'), 'a');
});

const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
const push = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after: 'a'.repeat(40), repository: { full_name: 'acme/flags' } });

tap.test('GitHub deliveries: signature first, then ping, push and other events', async (t) => {
  const s = Buffer.from('gh-secret');
  const headers = (event: string, body: string, extra: Record<string, string> = {}) => ({
    'x-github-event': event,
    'x-github-delivery': 'd-1',
    'x-hub-signature-256': `sha256=${sign('gh-secret', body)}`,
    'content-type': 'application/json',
    ...extra,
  });
  t.same(githubDelivery(s, headers('push', push), Buffer.from(push)), { id: 'd-1', event: { kind: 'push', gitRef: 'refs/heads/main', after: 'a'.repeat(40) } });
  t.same(githubDelivery(s, headers('ping', '{"zen":"x"}'), Buffer.from('{"zen":"x"}')).event, { kind: 'ping' });
  t.same(githubDelivery(s, headers('issues', '{}'), Buffer.from('{}')).event, { kind: 'ignored', reason: 'event "issues" is not a push' });
  const form = `payload=${encodeURIComponent(push)}`;
  t.same(
    githubDelivery(s, headers('push', form, { 'content-type': 'application/x-www-form-urlencoded' }), Buffer.from(form)).event,
    { kind: 'push', gitRef: 'refs/heads/main', after: 'a'.repeat(40) },
    'the form content type: the JSON is the payload field',
  );
  t.throws(() => githubDelivery(s, { ...headers('push', push), 'x-hub-signature-256': `sha256=${sign('wrong', push)}` }, Buffer.from(push)), { code: 16 });
  t.throws(() => githubDelivery(s, { 'x-github-event': 'push' }, Buffer.from(push)), { code: 16, message: 'missing or invalid X-Hub-Signature-256' });
  t.throws(() => githubDelivery(s, headers('push', 'not json'), Buffer.from('not json')), { code: 3 }, 'signed but malformed: 400');
  t.throws(() => githubDelivery(s, headers('push', '{"ref":1}'), Buffer.from('{"ref":1}')), { code: 3, message: /"ref" must be a non-empty string/ });
});

tap.test('GitLab deliveries: the token, push and tag push hooks', async (t) => {
  const s = Buffer.from('gl-token');
  const h = (event: string) => ({ 'x-gitlab-token': 'gl-token', 'x-gitlab-event': event, 'x-gitlab-event-uuid': 'u-1' });
  t.same(gitlabDelivery(s, h('Push Hook'), Buffer.from(push)), { id: 'u-1', event: { kind: 'push', gitRef: 'refs/heads/main', after: 'a'.repeat(40) } });
  const tagPush = JSON.stringify({ object_kind: 'tag_push', ref: 'refs/tags/v1', after: 'b'.repeat(40) });
  t.same(gitlabDelivery(s, h('Tag Push Hook'), Buffer.from(tagPush)).event, { kind: 'push', gitRef: 'refs/tags/v1', after: 'b'.repeat(40) });
  t.same(gitlabDelivery(s, h('Merge Request Hook'), Buffer.from('{}')).event.kind, 'ignored');
  t.throws(() => gitlabDelivery(s, { ...h('Push Hook'), 'x-gitlab-token': 'gl-tokeN' }, Buffer.from(push)), { code: 16 });
});

tap.test('Gitea and Forgejo deliveries', async (t) => {
  const s = Buffer.from('gt-secret');
  const sig = sign('gt-secret', push);
  t.same(giteaDelivery(s, { 'x-gitea-signature': sig, 'x-gitea-event': 'push', 'x-gitea-delivery': 'g-1' }, Buffer.from(push)), {
    id: 'g-1',
    event: { kind: 'push', gitRef: 'refs/heads/main', after: 'a'.repeat(40) },
  });
  t.same(
    giteaDelivery(s, { 'x-forgejo-signature': sig, 'x-forgejo-event': 'push', 'x-forgejo-delivery': 'f-1' }, Buffer.from(push)).id,
    'f-1',
    "Forgejo's own headers",
  );
  t.throws(() => giteaDelivery(s, { 'x-gitea-signature': `sha256=${sig}`, 'x-gitea-event': 'push' }, Buffer.from(push)), { code: 16 });
});

tap.test('generic deliveries: X-Vexil-Signature, one reference or all', async (t) => {
  const s = Buffer.from('vx-secret');
  const one = '{"reference":"preview/pr-1"}';
  t.same(genericDelivery(s, { 'x-vexil-signature': `sha256=${sign('vx-secret', one)}` }, Buffer.from(one)), { event: { kind: 'push', reference: 'preview/pr-1' } });
  t.same(genericDelivery(s, { 'x-vexil-signature': `sha256=${sign('vx-secret', '{}')}` }, Buffer.from('{}')), { event: { kind: 'push' } }, 'no reference: every one');
  t.same(genericDelivery(s, { 'x-vexil-signature': `sha256=${sign('vx-secret', '')}` }, Buffer.alloc(0)), { event: { kind: 'push' } }, 'an empty body too');
  t.throws(() => genericDelivery(s, { 'x-vexil-signature': `sha256=${sign('vx-secret', '{"reference":7}')}` }, Buffer.from('{"reference":7}')), { code: 3 });
  t.throws(() => genericDelivery(s, { 'x-vexil-signature': `sha256=${sign('vx-secret', '[]')}` }, Buffer.from('[]')), { code: 3 });
  t.throws(() => genericDelivery(s, {}, Buffer.from(one)), { code: 16 });
});
