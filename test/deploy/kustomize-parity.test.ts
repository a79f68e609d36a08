/**
 * The test renderer (kustomize-render.ts) against kustomize itself: `kubectl kustomize` renders
 * the base and both overlays to the same resources (compared as parsed objects keyed by apiVersion,
 * kind and name; kustomize sorts keys and resources, the renderer keeps the files' order).
 *
 * kubectl (with kustomize built in) is not installable from the package registries this project
 * reaches (Debian's kubernetes-client is 1.20, whose kustomize predates `patches`); this machine
 * has one (Debian package `kubectl` from the Google Cloud SDK). Where none is on PATH this file
 * skips with the reason, except under CI, where it fails (CI runs on a machine that has it); the
 * renderer's own checks in manifests.test.ts run everywhere.
 */
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { skipUnlessCI } from '../support/requirements.js';
import { resourceId, type K8sObject } from './kustomize-render.js';
import { KUSTOMIZE_ROOT, render, RENDERINGS } from './pod-values.js';

function kubectlUnavailableReason(): string | undefined {
  const r = spawnSync('kubectl', ['kustomize', '--help'], { stdio: 'ignore' });
  return r.status === 0 ? undefined : 'no kubectl with kustomize on PATH (not installable from npm or Debian in a current version)';
}

function kubectlKustomize(dir: string): Promise<K8sObject[]> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', dir], { maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`kubectl kustomize ${dir}: ${stderr}`));
      resolve(parseAllDocuments(stdout).map((d) => d.toJS() as K8sObject));
    });
  });
}

const byId = (objects: readonly K8sObject[]) => Object.fromEntries(objects.map((o) => [resourceId(o), o]));
const reason = kubectlUnavailableReason();

for (const name of RENDERINGS) {
  t.test(`${name}: the test renderer and kustomize agree`, { skip: skipUnlessCI(reason) }, async (t) => {
    const kustomize = await kubectlKustomize(join(KUSTOMIZE_ROOT, name));
    const ours = render(name);
    t.strictSame(Object.keys(byId(ours)).sort(), Object.keys(byId(kustomize)).sort(), 'the same resources');
    t.strictSame(byId(ours), byId(kustomize), 'with the same content');
  });
}
