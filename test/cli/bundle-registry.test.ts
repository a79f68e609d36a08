/**
 * `vexil bundle push` / `pull` against the real CNCF distribution registry (Debian
 * `docker-registry`) on loopback: anonymous and htpasswd (basic) registries, a logging proxy to
 * see which requests a push makes, and a hand-made bad registry for the digest check.
 *
 * Without docker-registry the tests skip with the reason; under CI (any truthy CI) they fail instead.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { openBundleStore } from '../../src/sources/oci/bundle-store.js';
import { parseOciReference } from '../../src/sources/oci/reference.js';
import { createRegistryClient } from '../../src/sources/oci/registry-client.js';
import { createOciSource } from '../../src/sources/oci/source.js';
import { readState } from '../../src/store/read-state.js';
import { FIXTURES } from '../store/temp-state.js';
import { REGISTRY_PASSWORD, REGISTRY_USER, registryUnavailableReason, startRegistry, startRegistryProxy } from '../support/oci-registry.js';
import { reportMissing } from '../support/requirements.js';
import { cleanEnv, REPO, tempDir, vexilBundle, type Result } from './bundle-cli.js';
import { STATE_LIMITS } from '../support/config-defaults.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const sha256 = (b: Uint8Array | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

interface Listed {
  name: string;
  digest: string;
  created: string | null;
  size: number;
}

async function list(bundles: string): Promise<Listed[]> {
  const r = await vexilBundle(['list', '--format', 'json', '--bundles-dir', bundles]);
  return JSON.parse(r.stdout) as Listed[];
}

/** A bundle of examples/ in a fresh store: its directory and digest. */
async function builtStore(t: Parameters<typeof tempDir>[0], name = 'flags:v1'): Promise<{ bundles: string; digest: string }> {
  const bundles = tempDir(t);
  const r = await vexilBundle(['build', '-d', 'examples', '--bundles-dir', bundles, name]);
  if (r.code !== 0) throw new Error(r.stderr);
  return { bundles, digest: /sha256:[0-9a-f]{64}/.exec(r.stdout)![0] };
}

/** The real executable, with stdin piped (for --password-stdin). */
function spawnWithStdin(args: readonly string[], stdin: string): Promise<Result> {
  const tsx = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
  const child = spawn(process.execPath, [`--import=${tsx}`, join(REPO, 'src/cli/main.ts'), ...args], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const unavailable = registryUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'docker-registry', unavailable);
} else {
  const registry = await startRegistry();
  t.teardown(() => registry.close());
  const secured = await startRegistry({ auth: 'basic' });
  t.teardown(() => secured.close());

  t.test('push: blobs then manifest, progress on stderr; the registry serves the same digest', async (t) => {
    const { bundles, digest } = await builtStore(t);
    const remote = `${registry.host}/team/flags:v1`;
    const r = await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `pushed ${remote} ${digest}\n`);
    const progress = r.stderr.trimEnd().split('\n');
    t.match(progress[0], new RegExp(`^pushing flags:v1 \\(sha256:[0-9a-f]{12}\\) to ${remote}: 4 blobs, [\\d.]+ kB$`));
    t.equal(progress.filter((l) => /^ {2}\[\d\/4\] sha256:[0-9a-f]{12} [\d.]+ k?B: pushed$/.test(l)).length, 4, 'a line per blob');
    t.match(progress.at(-1), /^ {2}manifest sha256:[0-9a-f]{12} [\d.]+ k?B: pushed$/);

    const res = await fetch(`${registry.url}/v2/team/flags/manifests/v1`, { headers: { accept: OCI_MANIFEST } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('docker-content-digest'), digest);
    const bytes = new Uint8Array(await res.arrayBuffer());
    t.equal(sha256(bytes), digest, 'byte-identical manifest');
    const manifest = JSON.parse(new TextDecoder().decode(bytes)) as { artifactType: string; config: { digest: string }; layers: Array<{ digest: string }> };
    t.equal(manifest.artifactType, 'application/vnd.io.svc.features.v1');
    for (const d of [manifest.config, ...manifest.layers]) {
      const blob = await fetch(`${registry.url}/v2/team/flags/blobs/${d.digest}`);
      t.equal(blob.status, 200, `blob ${d.digest.slice(0, 19)} present`);
      t.equal(sha256(new Uint8Array(await blob.arrayBuffer())), d.digest);
    }
  });

  t.test('a second push skips the blobs the registry has (no upload)', async (t) => {
    const { bundles, digest } = await builtStore(t);
    t.equal((await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', `${registry.host}/skip/flags:v1`])).code, 0);
    const proxy = await startRegistryProxy(registry.url);
    t.teardown(() => proxy.close());
    const r = await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags', `${proxy.host}/skip/flags:v2`]);
    t.equal(r.code, 1, 'flags (no tag) means flags:latest, which is not in the store');
    const again = await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', `${proxy.host}/skip/flags:v2`]);
    t.equal(again.code, 0, again.stderr);
    t.equal(again.stdout, `pushed ${proxy.host}/skip/flags:v2 ${digest}\n`);
    t.equal(again.stderr.split('\n').filter((l) => l.endsWith(': already in the registry')).length, 4);
    t.same(
      proxy.requests.filter((q) => q.method !== 'HEAD').map((q) => `${q.method} ${q.path}`),
      ['PUT /v2/skip/flags/manifests/v2'],
      'only the manifest is written',
    );
  });

  t.test('pull into an empty store: same digest, same bytes, listed under the remote name', async (t) => {
    const { bundles, digest } = await builtStore(t);
    const remote = `${registry.host}/pulled/flags:v1`;
    t.equal((await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote])).code, 0);

    const second = tempDir(t);
    const r = await vexilBundle(['pull', '--bundles-dir', second, `http://${remote}`]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `pulled ${remote} ${digest}\n`);
    const progress = r.stderr.trimEnd().split('\n');
    t.equal(progress[0], `pulling ${remote}`);
    t.match(progress[1], /^ {2}manifest sha256:[0-9a-f]{12}: 4 blobs, [\d.]+ kB$/);
    t.equal(progress.filter((l) => /^ {2}\[\d\/4\] sha256:[0-9a-f]{12} [\d.]+ k?B: pulled, verified$/.test(l)).length, 4);

    const listed = await list(second);
    t.equal(listed.length, 1);
    t.equal(listed[0]!.name, remote);
    t.equal(listed[0]!.digest, digest);
    t.same(listed[0], (await list(bundles)).map((b) => ({ ...b, name: remote }))[0], 'same created and size as the built one');
    const manifest = JSON.parse(readFileSync(join(second, 'blobs', 'sha256', digest.slice(7)), 'utf8')) as { layers: Array<{ digest: string }> };
    for (const l of manifest.layers) {
      t.same(readFileSync(join(second, 'blobs', 'sha256', l.digest.slice(7))), readFileSync(join(bundles, 'blobs', 'sha256', l.digest.slice(7))));
    }

    const again = await vexilBundle(['pull', '--insecure', '--bundles-dir', second, remote]);
    t.equal(again.code, 0);
    t.equal(again.stderr.split('\n').filter((l) => l.endsWith(': already in the local store')).length, 4, 'nothing downloaded twice');

    const byDigest = await vexilBundle(['pull', '--insecure', '--bundles-dir', second, `${registry.host}/pulled/flags@${digest}`]);
    t.equal(byDigest.code, 0, byDigest.stderr);
    t.ok((await list(second)).some((b) => b.name === `${registry.host}/pulled/flags@${digest}` && b.digest === digest), 'a digest pull is named by its digest');
  });

  t.test('what push sent is what the OCI source serves; a pulled store serves it with the registry gone', async (t) => {
    const dir = tempDir(t, 'vexil-state-');
    mkdirSync(join(dir, 'flags'));
    writeFileSync(join(dir, '.vexil.yml'), 'version: "1.0"\ninclude:\n  - "flags/*.yml"\n');
    writeFileSync(join(dir, 'flags', 'hello.yml'), readFileSync(join(FIXTURES, 'hello', 'features.yml')));
    const bundles = tempDir(t);
    t.equal((await vexilBundle(['build', '-d', dir, '--bundles-dir', bundles, 'served:v1'])).code, 0);
    const remote = `${registry.host}/served/flags:v1`;
    t.equal((await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'served:v1', remote])).code, 0);

    const reference = parseOciReference(remote, { insecure: true });
    const source = createOciSource({ ...STATE_LIMITS, reference, client: createRegistryClient(), store: await openBundleStore(tempDir(t)) });
    const rev = (await source.refs()).get('v1');
    t.ok(rev, 'the tag is a reference');
    const state = await readState(await source.files(rev!), { ...STATE_LIMITS, reference: 'v1' });
    t.same(state.problems, [], 'valid: the index file came along and selected flags/hello.yml');
    t.same(state.files, ['flags/hello.yml']);
    t.ok(state.snapshot?.namespaces.get('default')?.flags.size, 'the flags are served');

    // `vexil bundle pull` names the bundle as the source does: a pulled store needs no registry.
    const pulled = tempDir(t);
    t.equal((await vexilBundle(['pull', '--insecure', '--bundles-dir', pulled, remote])).code, 0);
    const offline = createOciSource({
      ...STATE_LIMITS,
      reference,
      client: createRegistryClient({ fetch: () => Promise.reject(new Error('offline')) }),
      store: await openBundleStore(pulled),
    });
    const cached = (await offline.cachedRefs()).get('v1');
    t.equal(cached?.id, rev!.id, 'the pulled bundle is the cached revision');
  });

  t.test('HTTPS spoken to a plain-HTTP registry: exit 1 with the way out', async (t) => {
    const bundles = tempDir(t);
    const r = await vexilBundle(['pull', '--bundles-dir', bundles, `${registry.host}/team/flags:v1`]);
    t.equal(r.code, 1);
    t.match(r.stderr, new RegExp(`^vexil: cannot pull ${registry.host}/team/flags:v1: registry ${registry.host} unreachable: .*use --insecure or an http:// REMOTE$`, 'm'));
  });

  t.test('pull of an unknown tag or repository: exit 1 "not found", nothing stored', async (t) => {
    const bundles = tempDir(t);
    for (const remote of [`${registry.host}/team/flags:nope`, `${registry.host}/nobody/here:v1`]) {
      const r = await vexilBundle(['pull', '--insecure', '--bundles-dir', bundles, remote]);
      t.equal(r.code, 1, remote);
      t.match(r.stderr, new RegExp(`^vexil: cannot pull ${remote}: not found`, 'm'));
      t.equal(r.stdout, '');
    }
    t.same(await list(bundles), []);
  });

  t.test('pull of something that is not a bundle: exit 1, says why', async (t) => {
    const config = new TextEncoder().encode('{"architecture":"amd64","os":"linux"}');
    const start = await fetch(`${registry.url}/v2/images/app/blobs/uploads/`, { method: 'POST' });
    const put = new URL(start.headers.get('location')!, registry.url);
    put.searchParams.set('digest', sha256(config));
    t.equal((await fetch(put, { method: 'PUT', body: config })).status, 201);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.byteLength },
      layers: [],
    });
    const res = await fetch(`${registry.url}/v2/images/app/manifests/v1`, { method: 'PUT', headers: { 'content-type': OCI_MANIFEST }, body: manifest });
    t.equal(res.status, 201);
    const bundles = tempDir(t);
    const r = await vexilBundle(['pull', '--insecure', '--bundles-dir', bundles, `${registry.host}/images/app:v1`]);
    t.equal(r.code, 1);
    t.match(r.stderr, /cannot pull .*container image, not a feature bundle/);
    t.same(await list(bundles), []);
  });

  t.test('basic auth: good credentials (environment, config, --password-stdin) work', async (t) => {
    const { bundles, digest } = await builtStore(t);
    const remote = `${secured.host}/auth/flags:v1`;
    const env = cleanEnv({ VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME: REGISTRY_USER, VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD: REGISTRY_PASSWORD });
    const pushed = await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote], { deps: { env } });
    t.equal(pushed.code, 0, pushed.stderr);
    t.equal(pushed.stdout, `pushed ${remote} ${digest}\n`);

    const dir = tempDir(t, 'vexil-config-');
    writeFileSync(
      join(dir, 'vexil.yml'),
      `storage:\n  oci:\n    insecure: true\n    bundles_directory: b\n    authentication:\n      username: ${REGISTRY_USER}\n      password: ${REGISTRY_PASSWORD}\n`,
    );
    const viaConfig = await vexilBundle(['pull', '--config', join(dir, 'vexil.yml'), remote]);
    t.equal(viaConfig.code, 0, viaConfig.stderr);
    t.equal((await list(join(dir, 'b')))[0]?.digest, digest);

    // A token file (relative to the config file) read as the password of the user.
    writeFileSync(join(dir, 'token'), `${REGISTRY_PASSWORD}\n`);
    writeFileSync(
      join(dir, 'token.yml'),
      `storage:\n  oci:\n    insecure: true\n    bundles_directory: t\n    authentication:\n      username: ${REGISTRY_USER}\n      access_token_path: token\n`,
    );
    const viaTokenFile = await vexilBundle(['pull', '--config', join(dir, 'token.yml'), remote]);
    t.equal(viaTokenFile.code, 0, viaTokenFile.stderr);
    t.equal((await list(join(dir, 't')))[0]?.digest, digest);

    const second = tempDir(t);
    const viaStdin = await vexilBundle(['pull', '--insecure', '--bundles-dir', second, '--username', REGISTRY_USER, '--password-stdin', remote], {
      deps: { readStdin: () => Promise.resolve(`${REGISTRY_PASSWORD}\n`) },
    });
    t.equal(viaStdin.code, 0, viaStdin.stderr);
    t.notMatch(viaStdin.stdout + viaStdin.stderr, REGISTRY_PASSWORD);

    const third = tempDir(t);
    const real = await spawnWithStdin(['bundle', 'pull', '--insecure', '--bundles-dir', third, '--username', REGISTRY_USER, '--password-stdin', remote], `${REGISTRY_PASSWORD}\n`);
    t.equal(real.code, 0, real.stderr);
    t.equal(real.stdout, `pulled ${remote} ${digest}\n`, 'the executable reads the password from its stdin');
  });

  t.test('basic auth: wrong or missing credentials → exit 1, a clear line, no secret printed', async (t) => {
    const { bundles } = await builtStore(t);
    const wrong = 'not-the-s3cret-pw';
    const remote = `${secured.host}/auth/flags:v2`;
    const env = cleanEnv({ VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME: REGISTRY_USER, VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD: wrong });
    const cases: Array<[string, Promise<Result>]> = [
      ['push, env', vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote], { deps: { env } })],
      ['pull, env', vexilBundle(['pull', '--insecure', '--bundles-dir', bundles, remote], { deps: { env } })],
      [
        'pull, stdin',
        vexilBundle(['pull', '--insecure', '--bundles-dir', bundles, '--username', REGISTRY_USER, '--password-stdin', remote], {
          deps: { readStdin: () => Promise.resolve(wrong) },
        }),
      ],
    ];
    for (const [what, pending] of cases) {
      const r = await pending;
      t.equal(r.code, 1, what);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('vexil:'));
      t.equal(errors.length, 1, `${what}: one error line`);
      t.match(errors[0], /authentication failed: .*credentials of user "alice" were refused \(HTTP 401\).*--password-stdin/, what);
      for (const secret of [wrong, Buffer.from(`${REGISTRY_USER}:${wrong}`).toString('base64')]) {
        t.notOk((r.stdout + r.stderr).includes(secret), `${what}: the secret is not printed`);
      }
    }
    const anonymous = await vexilBundle(['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote]);
    t.equal(anonymous.code, 1);
    t.match(anonymous.stderr, /^vexil: cannot push flags:v1 to .*: authentication failed: .*no credentials/m);
    t.same(await list(bundles).then((l) => l.map((b) => b.name)), ['flags:v1'], 'nothing pulled');
  });

  t.test('a registry answering bytes that do not match the digest: exit 1, nothing tagged', async (t) => {
    const good = new TextEncoder().encode('version: "1.4"\nnamespace: default\nflags: []\n');
    const bad = new Uint8Array(good.byteLength).fill(0x20);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: 'application/vnd.io.svc.features.v1',
      config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: sha256('{}'), size: 2 },
      layers: [
        {
          mediaType: 'application/vnd.io.svc.features.v1+yaml',
          digest: sha256(good),
          size: good.byteLength,
          annotations: { 'org.opencontainers.image.title': 'features.yml' },
        },
      ],
      annotations: { 'org.opencontainers.image.created': '2026-01-01T00:00:00Z' },
    });
    const server = http.createServer((req, res) => {
      if (req.url === '/v2/evil/flags/manifests/v1') {
        res.writeHead(200, { 'content-type': OCI_MANIFEST, 'docker-content-digest': sha256(manifest) });
        res.end(manifest);
      } else if (req.url === `/v2/evil/flags/blobs/${sha256('{}')}`) res.end('{}');
      else if (req.url === `/v2/evil/flags/blobs/${sha256(good)}`) res.end(bad);
      else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const bundles = tempDir(t);
    const remote = `127.0.0.1:${(server.address() as AddressInfo).port}/evil/flags:v1`;
    const r = await vexilBundle(['pull', '--insecure', '--bundles-dir', bundles, remote]);
    t.equal(r.code, 1);
    t.match(r.stderr, /^vexil: cannot pull .*: digest mismatch: .*hashes to sha256:[0-9a-f]{64}; nothing was tagged$/m);
    t.same(await list(bundles), []);
  });
}
