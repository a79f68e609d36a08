/**
 * The registry client against a real CNCF distribution registry (Debian `docker-registry`) on
 * loopback: push and pull with digest checks, Basic and Bearer (token service) challenges,
 * rotating token files, error kinds and messages that never carry a secret.
 *
 * Without docker-registry the tests skip with the reason; under CI (any truthy CI) they fail instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildBundle, OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE, sha256Digest } from '../../src/sources/oci/bundle-format.js';
import { parseOciReference } from '../../src/sources/oci/reference.js';
import { createRegistryClient, parseChallenge } from '../../src/sources/oci/registry-client.js';
import { RegistryError, type BuiltBundle, type OciReference, type RegistryClient } from '../../src/sources/oci/types.js';
import { REGISTRY_PASSWORD, registryUnavailableReason, startRegistry, startRegistryProxy, tokenAuthUnavailableReason } from '../support/oci-registry.js';
import { isCI, reportMissing, skipUnlessCI } from '../support/requirements.js';

const enc = (s: string) => new TextEncoder().encode(s);

t.test('WWW-Authenticate challenges', async (t) => {
  t.same(parseChallenge('Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push"'), {
    scheme: 'bearer',
    params: { realm: 'https://auth.example/token', service: 'reg', scope: 'repository:a/b:pull,push' },
  });
  t.same(parseChallenge('Basic realm="test-registry"'), { scheme: 'basic', params: { realm: 'test-registry' } });
  t.same(parseChallenge('Basic'), { scheme: 'basic', params: {} });
  t.equal(parseChallenge(''), undefined);
});

t.test('an unreachable registry and one that never answers: unreachable, naming host:port', async (t) => {
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const client = createRegistryClient();
  const err = (await client.resolve(parseOciReference(`http://127.0.0.1:${closed}/flags:v1`)).catch((e: unknown) => e)) as RegistryError;
  t.ok(err instanceof RegistryError);
  t.equal(err.kind, 'unreachable');
  t.match(err.message, new RegExp(`resolving 127\\.0\\.0\\.1:${closed}/flags:v1: cannot reach http://127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\)`));

  const silent: Server = createServer(() => {}).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  t.teardown(() => {
    silent.close();
  });
  const port = (silent.address() as { port: number }).port;
  const slow = createRegistryClient({ timeoutMs: 300 });
  const timeout = (await slow.resolve(parseOciReference(`http://127.0.0.1:${port}/flags:v1`)).catch((e: unknown) => e)) as RegistryError;
  t.equal(timeout.kind, 'unreachable');
  t.match(timeout.message, new RegExp(`127\\.0\\.0\\.1:${port} did not answer within 0\\.3s`));
});

const unavailable = registryUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'docker-registry', unavailable);
} else {
  const bundle = (text: string) => buildBundle([{ path: 'features.yml', bytes: enc(text) }], { manifestVersion: '1.1', created: '2026-11-26T04:00:00Z' });

  async function push(client: RegistryClient, ref: OciReference, b: BuiltBundle): Promise<string> {
    for (const [digest, bytes] of b.blobs) if (!(await client.hasBlob(ref, digest))) await client.pushBlob(ref, digest, bytes);
    return client.pushManifest(ref, b.manifestBytes, OCI_MANIFEST_MEDIA_TYPE);
  }

  t.test('anonymous registry: push, resolve, pull (verified), tags; missing things are not-found', async (t) => {
    const reg = await startRegistry();
    t.teardown(() => reg.close());
    const client = createRegistryClient();
    const ref = parseOciReference(`http://${reg.host}/team/flags:v1`);
    const b = bundle('a: 1\n');
    t.equal(await push(client, ref, b), b.manifestDigest, 'the registry stores the exact bytes');
    for (const digest of b.blobs.keys()) t.ok(await client.hasBlob(ref, digest));

    const resolved = await client.resolve(ref);
    t.same(resolved, { digest: b.manifestDigest, mediaType: OCI_MANIFEST_MEDIA_TYPE, size: b.manifestBytes.byteLength });
    const got = await client.getManifest(ref);
    t.equal(got.digest, b.manifestDigest);
    t.same(got.bytes, b.manifestBytes);
    t.same(got.manifest, b.manifest);
    const layer = b.manifest.layers[0];
    if (layer === undefined) throw new Error('no layer');
    t.equal(new TextDecoder().decode(await client.getBlob(ref, layer)), 'a: 1\n');
    const byDigest = await client.getManifest({ ...ref, tag: undefined, digest: b.manifestDigest } as OciReference);
    t.equal(byDigest.digest, b.manifestDigest);

    await push(client, { ...ref, tag: 'v2' }, bundle('a: 2\n'));
    t.same((await client.listTags(ref)).sort(), ['v1', 'v2']);

    t.equal(await client.resolve({ ...ref, tag: 'nope' }), undefined, 'an unknown tag resolves to undefined');
    const missing = (await client.getManifest({ ...ref, tag: 'nope' }).catch((e: unknown) => e)) as RegistryError;
    t.equal(missing.kind, 'not-found');
    t.match(missing.message, /pulling the manifest of 127\.0\.0\.1:\d+\/team\/flags:nope: not found \(HTTP 404\): MANIFEST_UNKNOWN/);
    const blob = (await client.getBlob(ref, { mediaType: 'x', digest: sha256Digest(enc('zzz')), size: 3 }).catch((e: unknown) => e)) as RegistryError;
    t.equal(blob.kind, 'not-found');
    t.notOk(await client.hasBlob(ref, sha256Digest(enc('zzz'))));
    await t.rejects(client.pushBlob(ref, sha256Digest(enc('other')), enc('zzz')), { kind: 'digest-mismatch', message: /hashes to/ }, 'refuses to push bytes under the wrong digest');
  });

  t.test('an image index is refused by name; tampered content is digest-mismatch', async (t) => {
    const reg = await startRegistry();
    t.teardown(() => reg.close());
    const client = createRegistryClient();
    const ref = parseOciReference(`http://${reg.host}/flags:v1`);
    const b = bundle('a: 1\n');
    await push(client, ref, b);
    const index = enc(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX_MEDIA_TYPE,
        manifests: [{ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: b.manifestDigest, size: b.manifestBytes.byteLength }],
      }),
    );
    await client.pushManifest({ ...ref, tag: 'multi' }, index, OCI_INDEX_MEDIA_TYPE);
    const err = (await client.getManifest({ ...ref, tag: 'multi' }).catch((e: unknown) => e)) as RegistryError;
    t.equal(err.kind, 'invalid');
    t.match(err.message, /image index .*not a bundle/);

    // A fault injector in front of the real registry: flips the body of every blob and manifest.
    const tampering: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method !== 'GET' || !res.ok) return res;
      const body = new Uint8Array(await res.arrayBuffer());
      if (body.length > 0) body[0] = (body[0] as number) ^ 1;
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const bad = createRegistryClient({ fetch: tampering });
    await t.rejects(bad.getManifest(ref), { kind: 'digest-mismatch', message: /hashes to sha256:[0-9a-f]{64}, expected/ });
    const layer = b.manifest.layers[0];
    if (layer === undefined) throw new Error('no layer');
    await t.rejects(bad.getBlob(ref, layer), { kind: 'digest-mismatch', message: /hashes to/ });

    // One that sends more than the manifest promised, without a Content-Length: not buffered past the size.
    const padding: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method !== 'GET' || !res.ok) return res;
      const body = new Uint8Array(await res.arrayBuffer());
      const longer = new Uint8Array(body.length + 1000);
      longer.set(body);
      const headers = new Headers(res.headers);
      headers.delete('content-length');
      return new Response(longer, { status: res.status, headers });
    };
    await t.rejects(createRegistryClient({ fetch: padding }).getBlob(ref, layer), { kind: 'digest-mismatch', message: /sent more than the \d+ bytes the manifest says/ });
  });

  t.test('basic auth: the challenge once, then preemptive; wrong and missing credentials say so without the secret', async (t) => {
    const reg = await startRegistry({ auth: 'basic' });
    t.teardown(() => reg.close());
    const proxy = await startRegistryProxy(reg.url);
    t.teardown(() => proxy.close());
    const ref = parseOciReference(`http://${proxy.host}/team/flags:v1`);
    const client = createRegistryClient({ credentials: { username: 'alice', password: REGISTRY_PASSWORD } });
    const b = bundle('a: 1\n');
    await push(client, ref, b);
    proxy.requests.length = 0;
    t.equal((await client.resolve(ref))?.digest, b.manifestDigest);
    t.equal((await client.resolve(ref))?.digest, b.manifestDigest);
    t.same(
      proxy.requests.map((r) => [r.method, r.status]),
      [
        ['HEAD', 200],
        ['HEAD', 200],
      ],
      'one request per resolve once the scheme is known',
    );

    const wrong = createRegistryClient({ credentials: { username: 'alice', password: 'hunter2-wrong' } });
    const err = (await wrong.resolve(ref).catch((e: unknown) => e)) as RegistryError;
    t.equal(err.kind, 'unauthorized');
    t.match(err.message, /the credentials of user "alice" were refused \(HTTP 401\)/);
    t.notMatch(err.message, /hunter2/);
    const none = (await createRegistryClient().getManifest(ref).catch((e: unknown) => e)) as RegistryError;
    t.equal(none.kind, 'unauthorized');
    t.match(none.message, /authentication is required and no credentials are configured \(HTTP 401\)/);

    const dir = mkdtempSync(join(tmpdir(), 'vexil-token-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'password');
    writeFileSync(tokenFile, `${REGISTRY_PASSWORD}\n`);
    const rotating = createRegistryClient({ credentials: { username: 'alice', tokenFile } });
    t.equal((await rotating.resolve(ref))?.digest, b.manifestDigest, 'the token file is the password');
    writeFileSync(tokenFile, 'rotated-wrong');
    await t.rejects(rotating.resolve(ref), { kind: 'unauthorized', message: /user "alice" were refused/ }, 'read again before every operation');
    writeFileSync(tokenFile, REGISTRY_PASSWORD);
    t.equal((await rotating.resolve(ref))?.digest, b.manifestDigest);
    rmSync(tokenFile);
    await t.rejects(rotating.resolve(ref), { kind: 'unauthorized', message: /cannot read the registry token file .*ENOENT/ });
  });

  const noOpenssl = tokenAuthUnavailableReason();
  if (noOpenssl !== undefined && isCI()) reportMissing(t, 'openssl', noOpenssl);
  t.test('token auth: Bearer from the token service, cached per scope until it expires', { skip: skipUnlessCI(noOpenssl) }, async (t) => {
    const reg = await startRegistry({ auth: 'token' });
    t.teardown(() => reg.close());
    const tokens = reg.tokens;
    if (tokens === undefined) throw new Error('no token service');
    const ref = parseOciReference(`http://${reg.host}/team/flags:v1`);
    const client = createRegistryClient({ credentials: { username: 'alice', password: REGISTRY_PASSWORD } });
    const b = bundle('a: 1\n');
    await push(client, ref, b);
    t.same(
      // The registry names the actions in any order (it asks for the scope we then request).
      tokens.requests.map((r) => [r.scope.replace('push,pull', 'pull,push'), r.service, r.user, r.granted]),
      [
        ['repository:team/flags:pull', 'vexil-registry', 'alice', true],
        ['repository:team/flags:pull,push', 'vexil-registry', 'alice', true],
      ],
      'one token per scope while pushing (blob checks pull, uploads push)',
    );
    tokens.requests.length = 0;
    t.equal((await client.resolve(ref))?.digest, b.manifestDigest);
    t.equal((await client.resolve(ref))?.digest, b.manifestDigest);
    t.equal(new TextDecoder().decode(await client.getBlob(ref, b.manifest.layers[0] as (typeof b.manifest.layers)[0])), 'a: 1\n');
    t.same(tokens.requests, [], 'the cached pull token is reused');

    tokens.expiresIn = 1;
    const shortLived = createRegistryClient({ credentials: { username: 'alice', password: REGISTRY_PASSWORD } });
    t.equal((await shortLived.resolve(ref))?.digest, b.manifestDigest);
    t.equal(tokens.requests.length, 1);
    await new Promise((r) => setTimeout(r, 1100));
    t.equal((await shortLived.resolve(ref))?.digest, b.manifestDigest);
    t.equal(tokens.requests.length, 2, 'an expired token is not sent: a new one is asked for');

    const anonymous = (await createRegistryClient().resolve(ref).catch((e: unknown) => e)) as RegistryError;
    t.equal(anonymous.kind, 'unauthorized', 'an anonymous token grants nothing');
    const wrong = (await createRegistryClient({ credentials: { username: 'alice', password: 'nope-secret' } }).resolve(ref).catch((e: unknown) => e)) as RegistryError;
    t.equal(wrong.kind, 'unauthorized');
    t.match(wrong.message, /the token service 127\.0\.0\.1:\d+ refused the credentials of user "alice" \(HTTP 401\)/);
    t.notMatch(wrong.message, /nope-secret/);
  });
}
