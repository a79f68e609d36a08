/**
 * Size limits of the OCI backend against a real CNCF distribution registry, through `vexil serve`
 * (a child process) talking to it via a counting proxy:
 * - a bundle whose manifest declares a config blob over 1 MiB (a real 2 MiB one, or a small one
 *   declared as 10 GiB) is refused from the manifest, the blob never requested;
 * - a bundle whose layers add up to more than storage.max_state_size is refused from the layer
 *   descriptors, no layer downloaded, the problem located on the layer that crossed the limit.
 * Each time the last good bundle keeps serving and /meta/snapshots shows the located problem.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { OCI_MANIFEST_MEDIA_TYPE, buildBundle, sha256Digest } from '../../src/sources/oci/bundle-format.js';
import { parseOciReference } from '../../src/sources/oci/reference.js';
import { createRegistryClient } from '../../src/sources/oci/registry-client.js';
import type { OciReference, RegistryClient } from '../../src/sources/oci/types.js';
import { serveCli } from '../cli/run-cli.js';
import { gitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { registryUnavailableReason, startRegistry, startRegistryProxy } from '../support/oci-registry.js';
import { reportMissing } from '../support/requirements.js';

const enc = (s: string) => new TextEncoder().encode(s);

/** Pushes a bundle of `files` (1.1 format) under ref's tag; `config` replaces its config blob. */
async function pushBundle(
  client: RegistryClient,
  ref: OciReference,
  files: Record<string, string>,
  created: string,
  config?: { bytes: Uint8Array; declaredSize?: number },
): Promise<{ digest: string; layers: string[]; config: string }> {
  const b = buildBundle(
    Object.entries(files).map(([path, text]) => ({ path, bytes: enc(text) })),
    { manifestVersion: '1.1', created },
  );
  const manifest = { ...b.manifest };
  const blobs = new Map(b.blobs);
  if (config !== undefined) {
    const digest = sha256Digest(config.bytes);
    blobs.set(digest, config.bytes);
    manifest.config = { mediaType: 'application/vnd.vexil.test.config+json', digest, size: config.declaredSize ?? config.bytes.byteLength };
  }
  for (const [digest, bytes] of blobs) if (!(await client.hasBlob(ref, digest))) await client.pushBlob(ref, digest, bytes);
  const digest = await client.pushManifest(ref, enc(JSON.stringify(manifest)), OCI_MANIFEST_MEDIA_TYPE);
  return { digest, layers: manifest.layers.map((l) => l.digest), config: manifest.config.digest };
}

function tempDir(t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-oci-limits-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const variant = (url: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {} }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

/** Polls /meta/snapshots until the reference shows a rejection of `digest`. */
async function rejectionOf(url: string, digest: string): Promise<any> {
  for (let i = 0; i < 150; i++) {
    const body = (await fetch(`${url}/meta/snapshots`).then((r) => r.json())) as any;
    const ref = body.references[0];
    if (ref?.lastRejected?.revision?.id === digest) return ref;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

const unavailable = registryUnavailableReason();
if (unavailable !== undefined) {
  reportMissing(t, 'docker-registry', unavailable);
} else {
  t.test('bundle limits through vexil serve and a real registry', async (t) => {
    const registry = await startRegistry();
    t.teardown(() => registry.close());
    const proxy = await startRegistryProxy(registry.url);
    t.teardown(() => proxy.close());
    const client = createRegistryClient();
    const ref = parseOciReference(`http://${proxy.host}/team/flags:v1`);
    const good = await pushBundle(client, ref, { 'features.yml': gitFixture('hello.yml') }, '2026-11-26T04:00:00Z');
    const { listening } = await serveCli(t, ['serve'], {
      env: {
        VEXIL_SERVER_HTTP_PORT: '0',
        VEXIL_DATA_DIR: tempDir(t),
        VEXIL_STORAGE_TYPE: 'oci',
        VEXIL_STORAGE_OCI_REPOSITORY: `http://${proxy.host}/team/flags:v1`,
        VEXIL_STORAGE_OCI_POLL_INTERVAL: '1s',
        VEXIL_STORAGE_MAX_STATE_SIZE: '4096',
      },
    });
    const url = String(listening.url);
    t.equal((await variant(url)).body.variantKey, 'hello');

    const downloaded = (digest: string) => proxy.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/blobs/${digest}`));

    t.test('a config blob over 1 MiB: refused from the manifest, never downloaded', async (t) => {
      const big = await pushBundle(client, ref, { 'features.yml': gitFixture('bonjour.yml') }, '2026-11-26T05:00:00Z', {
        bytes: randomBytes(2 * 1024 * 1024),
      });
      const rejected = await rejectionOf(url, big.digest);
      t.match(rejected?.lastRejected?.problems, [
        { severity: 'error', rule: 'bundle.config-too-large', file: '', message: /config blob of 2097152 bytes .*over the limit of 1048576 bytes: not downloaded/ },
      ]);
      t.equal(rejected?.revision?.id, good.digest, 'the last good bundle is still the one served');
      t.notOk(downloaded(big.config), 'the config blob was never requested');
      t.notOk(downloaded(big.layers[0]!), 'nor the layers of the refused bundle');
      t.equal((await variant(url)).body.variantKey, 'hello');
    });

    t.test('a small config blob declared as 10 GiB: refused the same way', async (t) => {
      let lying;
      try {
        lying = await pushBundle(client, ref, { 'features.yml': gitFixture('bonjour.yml') }, '2026-11-26T06:00:00Z', {
          bytes: enc('{"lie":true}'),
          declaredSize: 10 * 1024 ** 3,
        });
      } catch (err) {
        t.comment(`the registry refuses a manifest declaring a wrong size: ${(err as Error).message}`);
        return;
      }
      const rejected = await rejectionOf(url, lying.digest);
      t.match(rejected?.lastRejected?.problems, [{ rule: 'bundle.config-too-large', message: /config blob of 10737418240 bytes/ }]);
      t.notOk(downloaded(lying.config), 'the config blob was never requested');
    });

    t.test('layers adding up to more than storage.max_state_size: refused from their sizes, none downloaded', async (t) => {
      const filler = (n: number) => `${gitFixture('bonjour.yml')}\n# ${String(n).repeat(2000)}\n`;
      const files = { 'a.features.yml': filler(1), 'b.features.yml': filler(2), 'c.features.yml': filler(3) };
      const over = await pushBundle(client, ref, files, '2026-11-26T07:00:00Z');
      const rejected = await rejectionOf(url, over.digest);
      t.match(rejected?.lastRejected?.problems, [
        {
          severity: 'error',
          rule: 'state.too-large',
          file: 'b.features.yml',
          message: /add up to more than 4096 bytes: b\.features\.yml \(\d+ bytes\) brings them to \d+ bytes/,
        },
      ]);
      for (const layer of over.layers) t.notOk(downloaded(layer), `layer ${layer} was not downloaded`);
      t.equal((await variant(url)).body.variantKey, 'hello', 'the last good bundle keeps serving');
    });
  });
}
