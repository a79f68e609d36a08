/**
 * Renders a kustomization folder of deploy/kubernetes/ the way `kustomize build` does, for the
 * subset those folders use: `resources` (YAML files and other kustomization folders) and
 * `patches` whose entries name a strategic-merge patch file (`path`) that targets one resource by
 * apiVersion, kind and name. Anything else in a kustomization (generators, images, labels,
 * JSON 6902 patches, `target:` selectors, `$patch`/`$setElementOrder` directives) is refused, so
 * the manifests cannot use a feature this renderer would get wrong.
 *
 * Strategic merge, as kustomize 5 applies it (checked against `kubectl kustomize` by
 * kustomize-parity.test.ts): maps merge key by key, a `null` deletes the key; the lists Kubernetes
 * declares with a merge key (containers and env by name, volumeMounts by mountPath, ...) merge item
 * by item: the patch's items first, in the patch's order (each merged into the base item of the
 * same key), then the base items the patch does not name; every other list is replaced. Like
 * kustomize, `retainKeys` is not applied: a patch replacing a volume's source must null the old one.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  [key: string]: unknown;
}

type Tree = Record<string, unknown>;

const KUSTOMIZATION_FILE = 'kustomization.yaml';
const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'patches']);

/** Lists merged item by item, and the key that pairs items (Kubernetes' patchMergeKey). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  imagePullSecrets: 'name',
  topologySpreadConstraints: 'topologyKey',
};

/** `Kind/name` (with the apiVersion), as kustomize names a resource in its errors. */
export function resourceId(o: Pick<K8sObject, 'apiVersion' | 'kind' | 'metadata'>): string {
  return `${o.apiVersion} ${o.kind}/${o.metadata?.name}`;
}

/** The rendered resources of the kustomization in `dir`, in the order they were listed. */
export function renderKustomization(dir: string): K8sObject[] {
  const file = join(dir, KUSTOMIZATION_FILE);
  const k = readYamlDocs(file)[0] as Tree | undefined;
  if (k === undefined || typeof k !== 'object') throw new Error(`${file}: empty`);
  for (const field of Object.keys(k)) {
    if (!SUPPORTED_FIELDS.has(field)) throw new Error(`${file}: "${field}" is not supported by the test renderer (resources and patches only)`);
  }
  const out: K8sObject[] = [];
  const add = (o: K8sObject, from: string) => {
    if (out.some((p) => resourceId(p) === resourceId(o))) throw new Error(`${from}: ${resourceId(o)} is defined twice`);
    out.push(o);
  };
  for (const entry of asStrings(k.resources, `${file}: resources`)) {
    const target = resolve(dir, entry);
    if (!existsSync(target)) throw new Error(`${file}: resource ${entry} does not exist`);
    if (statSync(target).isDirectory()) {
      for (const o of renderKustomization(target)) add(o, target);
    } else {
      for (const doc of readYamlDocs(target)) add(asObject(doc, target), target);
    }
  }
  if (k.patches !== undefined) {
    if (!Array.isArray(k.patches)) throw new Error(`${file}: patches must be a list`);
    for (const p of k.patches as unknown[]) {
      const keys = p !== null && typeof p === 'object' ? Object.keys(p) : [];
      if (keys.length !== 1 || keys[0] !== 'path') throw new Error(`${file}: a patch must be { path: FILE } only (got ${JSON.stringify(p)})`);
      const patchFile = resolve(dir, String((p as Tree).path));
      const docs = readYamlDocs(patchFile);
      if (docs.length !== 1) throw new Error(`${patchFile}: one patch per file`);
      const patch = asObject(docs[0], patchFile);
      const at = out.findIndex((o) => resourceId(o) === resourceId(patch));
      if (at < 0) throw new Error(`${patchFile}: no resource ${resourceId(patch)} to patch`);
      out[at] = strategicMerge(out[at]!, patch, []) as K8sObject;
    }
  }
  return out;
}

/** Applies a strategic-merge patch (see the header); `path` names the field, for merge keys and errors. */
export function strategicMerge(base: unknown, patch: unknown, path: readonly string[]): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return Array.isArray(patch) ? mergeList(base, patch, path) : patch;
  }
  const result: Tree = base !== null && typeof base === 'object' && !Array.isArray(base) ? { ...(base as Tree) } : {};
  for (const [key, value] of Object.entries(patch as Tree)) {
    if (key.startsWith('$')) throw new Error(`${[...path, key].join('.')}: patch directives are not supported by the test renderer`);
    if (value === null) delete result[key];
    else result[key] = strategicMerge(result[key], value, [...path, key]);
  }
  return result;
}

function mergeList(base: unknown, patch: unknown[], path: readonly string[]): unknown[] {
  const field = path[path.length - 1] ?? '';
  const key = field === 'ports' ? portKey(patch) : MERGE_KEYS[field];
  if (key === undefined || !Array.isArray(base)) return patch.map((v) => strategicMerge(undefined, v, path));
  const baseItems = base as Tree[];
  const named = new Set<unknown>();
  const merged = patch.map((item) => {
    const id = (item as Tree)?.[key];
    if (id === undefined) throw new Error(`${path.join('.')}: an item without its merge key "${key}"`);
    named.add(id);
    const match = baseItems.find((b) => b?.[key] === id);
    return strategicMerge(match, item, path);
  });
  return [...merged, ...baseItems.filter((b) => !named.has(b?.[key]))];
}

/** Container ports pair by containerPort, Service ports by port. */
function portKey(items: unknown[]): string {
  return items.some((i) => i !== null && typeof i === 'object' && 'containerPort' in i) ? 'containerPort' : 'port';
}

function readYamlDocs(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const values: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

function asObject(doc: unknown, file: string): K8sObject {
  const o = doc as Partial<K8sObject> | null;
  if (o === null || typeof o !== 'object' || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') {
    throw new Error(`${file}: every document needs apiVersion, kind and metadata.name`);
  }
  return o as K8sObject;
}

function asStrings(v: unknown, what: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Error(`${what} must be a list of strings`);
  return v;
}
