/**
 * The remote backends through the real `vexil` command, the way an operator uses them:
 * `vexil bundle build` + `push` to a real registry, then `vexil serve` with `storage.type: oci`
 * answers evaluations from that bundle. (Each backend's behaviour in depth is tested in
 * test/sources/; this pins the wiring of `vexil serve`.)
 *
 * Without docker-registry the OCI test skips with the reason; under CI (any truthy CI) it fails instead.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { tempState } from '../store/temp-state.js';
import { registryUnavailableReason, startRegistry } from '../support/oci-registry.js';
import { reportMissing, skipUnlessCI } from '../support/requirements.js';
import { REPO, runCli, serveCli } from './run-cli.js';

/** Starts `vexil serve --config FILE`; resolves with the listening URL. */
async function serve(t: Test, config: string, env: Record<string, string> = {}): Promise<string> {
  return String((await serveCli(t, ['serve', '--config', config], { env })).listening.url);
}

async function evaluate(url: string, flagKey: string, context: Record<string, string>) {
  const res = await fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey, entityId: 'user-1', context }),
  });
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as Record<string, unknown> };
}

const unavailable = registryUnavailableReason();

t.test('serve: storage.type oci serves a bundle built and pushed with vexil bundle', { skip: skipUnlessCI(unavailable) }, async (t) => {
  if (unavailable !== undefined) {
    reportMissing(t, 'docker-registry', unavailable); // reached under CI only: fails
    return;
  }
  const registry = await startRegistry();
  t.teardown(() => registry.close());
  const dir = tempState(t);
  const bundles = join(dir, 'bundles');

  const built = await runCli(['bundle', 'build', '--dir', join(REPO, 'examples'), '--bundles-dir', bundles, 'flags:v1']);
  t.equal(built.code, 0, built.stderr);
  const remote = `${registry.host}/team/flags:v1`;
  const pushed = await runCli(['bundle', 'push', '--insecure', '--bundles-dir', bundles, 'flags:v1', remote]);
  t.equal(pushed.code, 0, pushed.stderr);
  const digest = /sha256:[0-9a-f]{64}/.exec(pushed.stdout)?.[0];
  t.ok(digest, 'push prints the manifest digest');

  const config = join(dir, 'vexil.yml');
  writeFileSync(
    config,
    [
      'server: { host: 127.0.0.1, http_port: 0 }',
      'log: { level: info, encoding: json }',
      'storage:',
      '  type: oci',
      '  oci:',
      `    repository: ${remote}`,
      '    insecure: true',
      '    bundles_directory: served-bundles',
      '    poll_interval: 1m',
      '',
    ].join('\n'),
  );
  const url = await serve(t, config);
  const r = await evaluate(url, 'color-theme', {});
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.equal(r.revision, digest, 'X-Vexil-Revision is the manifest digest');
  t.equal(r.body.flagKey, 'color-theme');
  t.equal(r.body.variantKey, 'light', 'the default variant of examples/');

  const snapshots = (await (await fetch(`${url}/meta/snapshots`)).json()) as {
    defaultReference: string;
    references: Array<{ reference: string; revision?: { id: string } }>;
  };
  t.equal(snapshots.defaultReference, 'v1');
  t.same(
    snapshots.references.map((s) => [s.reference, s.revision?.id]),
    [['v1', digest]],
    'one reference, named after the tag',
  );
});
