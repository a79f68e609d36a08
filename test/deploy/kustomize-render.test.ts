/**
 * The test renderer's strategic merge and its refusals (kustomize-render.ts), on small cases whose
 * expected results are what `kubectl kustomize` (kustomize 5.5) printed for the same inputs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { renderKustomization, strategicMerge } from './kustomize-render.js';

t.test('merge-keyed lists: the patch items first, in its order, then the base items it does not name', async (t) => {
  const base = { containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }, { name: 'C', value: '3' }] }] };
  const patch = { containers: [{ name: 'c', env: [{ name: 'B', value: '2' }, { name: 'C', value: '33' }, { name: 'D', value: '4' }] }] };
  t.strictSame(strategicMerge(base, patch, []), {
    containers: [
      {
        name: 'c',
        image: 'i',
        env: [{ name: 'B', value: '2' }, { name: 'C', value: '33' }, { name: 'D', value: '4' }, { name: 'A', value: '1' }],
      },
    ],
  });
});

t.test('null deletes a key; no retainKeys: a volume keeps its old source unless the patch nulls it', async (t) => {
  const base = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, volumes: [{ name: 'data', emptyDir: {} }, { name: 'other', emptyDir: {} }] };
  t.strictSame(strategicMerge(base, { strategy: { type: 'Recreate' }, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'd' } }] }, []), {
    strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } },
    volumes: [{ name: 'data', emptyDir: {}, persistentVolumeClaim: { claimName: 'd' } }, { name: 'other', emptyDir: {} }],
  });
  t.strictSame(strategicMerge(base, { strategy: { rollingUpdate: null, type: 'Recreate' }, volumes: [{ name: 'data', emptyDir: null, persistentVolumeClaim: { claimName: 'd' } }] }, []), {
    strategy: { type: 'Recreate' },
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'd' } }, { name: 'other', emptyDir: {} }],
  });
  t.strictSame(strategicMerge({ args: ['a', 'b'] }, { args: ['c'] }, []), { args: ['c'] }, 'other lists are replaced');
});

t.test('what the renderer does not implement is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-kustomize-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n';
  writeFileSync(join(dir, 'cm.yaml'), cm);
  const write = (k: string) => writeFileSync(join(dir, 'kustomization.yaml'), k);

  write('resources: [cm.yaml]\nimages: [{name: vexil, newTag: "1"}]\n');
  t.throws(() => renderKustomization(dir), /"images" is not supported by the test renderer/);
  write('resources: [cm.yaml]\npatches: [{path: p.yaml, target: {kind: ConfigMap}}]\n');
  t.throws(() => renderKustomization(dir), /a patch must be \{ path: FILE \} only/);
  writeFileSync(join(dir, 'p.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: w}\n');
  write('resources: [cm.yaml]\npatches: [{path: p.yaml}]\n');
  t.throws(() => renderKustomization(dir), /no resource v1 ConfigMap\/b to patch/);
  writeFileSync(join(dir, 'p.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {$patch: replace, k: w}\n');
  t.throws(() => renderKustomization(dir), /data.\$patch: patch directives are not supported/);
  write('resources: [cm.yaml, cm.yaml]\n');
  t.throws(() => renderKustomization(dir), /v1 ConfigMap\/a is defined twice/);
  writeFileSync(join(dir, 'p.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: w}\n');
  write('resources: [cm.yaml]\npatches: [{path: p.yaml}]\n');
  t.strictSame(renderKustomization(dir), [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'w' } }]);
});
