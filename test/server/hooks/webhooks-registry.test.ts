/**
 * Registry notifications end to end: Debian's `docker-registry` (CNCF distribution) configured
 * with `notifications.endpoints` pointing at `vexil serve`'s `/hooks/registry` (one endpoint with
 * the configured `Authorization: Bearer` header, one with a wrong token), vexil serving the
 * repository's `v1` tag with a one-hour poll interval. Pushing a new bundle under the tag: the
 * registry's notification makes vexil serve it without waiting for the poll. A push to another
 * repository is acknowledged and ignored; the wrong token's deliveries are refused (counted by
 * `vexil_webhook_deliveries_total`).
 */
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { OCI_MANIFEST_MEDIA_TYPE, buildBundle } from '../../../src/sources/oci/bundle-format.js';
import { parseOciReference } from '../../../src/sources/oci/reference.js';
import { createRegistryClient } from '../../../src/sources/oci/registry-client.js';
import type { OciReference, RegistryClient } from '../../../src/sources/oci/types.js';
import { serveCli } from '../../cli/run-cli.js';
import { gitFixture } from '../../support/git-fixture.js';
import { registryUnavailableReason, startRegistry } from '../../support/oci-registry.js';
import { testsNeeding } from '../../support/requirements.js';

const t = testsNeeding(tap, 'docker-registry', registryUnavailableReason());

const TOKEN = 'registry-notification-token';
const enc = (s: string) => new TextEncoder().encode(s);

async function pushBundle(client: RegistryClient, ref: OciReference, files: Record<string, string>, created: string): Promise<string> {
  const b = buildBundle(
    Object.entries(files).map(([path, text]) => ({ path, bytes: enc(text) })),
    { manifestVersion: '1.1', created },
  );
  for (const [digest, bytes] of b.blobs) if (!(await client.hasBlob(ref, digest))) await client.pushBlob(ref, digest, bytes);
  return client.pushManifest(ref, enc(JSON.stringify(b.manifest)), OCI_MANIFEST_MEDIA_TYPE);
}

/** A port free now, for vexil (the registry's config must name it before vexil starts). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

t.test('a push to the registry refreshes the OCI backend through its notification', async (t) => {
  const port = await freePort();
  const hook = `http://127.0.0.1:${port}/hooks/registry`;
  const registry = await startRegistry({
    notifications: [
      { name: 'vexil', url: hook, headers: { Authorization: `Bearer ${TOKEN}` } },
      { name: 'forged', url: hook, headers: { Authorization: 'Bearer not-the-token' } },
    ],
  });
  t.teardown(() => registry.close());
  const client = createRegistryClient();
  const ref = parseOciReference(`http://${registry.host}/team/flags:v1`);
  const first = await pushBundle(client, ref, { 'features.yml': gitFixture('hello.yml') }, '2026-11-27T04:00:00Z');

  const dataDir = mkdtempSync(join(tmpdir(), 'vexil-hooks-registry-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { listening } = await serveCli(t, ['serve'], {
    env: {
      VEXIL_SERVER_HTTP_PORT: String(port),
      VEXIL_DATA_DIR: dataDir,
      VEXIL_STORAGE_TYPE: 'oci',
      VEXIL_STORAGE_OCI_REPOSITORY: `http://${registry.host}/team/flags:v1`,
      VEXIL_STORAGE_OCI_POLL_INTERVAL: '1h',
      VEXIL_WEBHOOKS_REGISTRY_TOKEN: TOKEN,
    },
  });
  const url = String(listening.url);
  const evaluate = async () => {
    const res = await fetch(`${url}/evaluate/v1/variant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1' }),
    });
    return { revision: res.headers.get('x-vexil-revision'), variant: ((await res.json()) as { variantKey?: string }).variantKey };
  };
  const deliveries = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const count = (outcome: string) => Number(new RegExp(`^vexil_webhook_deliveries_total\\{sender="registry",outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { accepted: count('accepted'), ignored: count('ignored'), unauthenticated: count('unauthenticated') };
  };
  t.same(await evaluate(), { revision: first, variant: 'hello' });

  // Another repository of the same registry: its push notifications are acknowledged and ignored.
  await pushBundle(client, parseOciReference(`http://${registry.host}/team/other:v1`), { 'features.yml': gitFixture('bonjour.yml') }, '2026-11-27T04:30:00Z');
  const second = await pushBundle(client, ref, { 'features.yml': gitFixture('bonjour.yml') }, '2026-11-27T05:00:00Z');
  t.not(second, first);
  // No deadline of its own: the test's timeout bounds the wait (the poll would take an hour).
  for (;;) {
    const now = await evaluate();
    if (now.revision === second) {
      t.equal(now.variant, 'bonjour', 'the pushed bundle is served');
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  let seen = await deliveries();
  while (seen.unauthenticated === 0 || seen.ignored === 0) {
    await new Promise((r) => setTimeout(r, 50));
    seen = await deliveries();
  }
  t.ok(seen.accepted >= 1, `deliveries accepted: ${seen.accepted}`);
  t.ok(seen.ignored >= 1, `deliveries ignored (blob pushes, the other repository): ${seen.ignored}`);
  t.ok(seen.unauthenticated >= 1, `deliveries with the wrong token refused: ${seen.unauthenticated}`);
});
