/**
 * The vexil container of a rendered Deployment, laid out on this machine: what a kubelet would give
 * the process, with every path moved under one temporary folder, so the manifests' command line,
 * environment, config and volumes can be started as `vexil serve` here.
 *
 * - Command line: the image's ENTRYPOINT (read from the Dockerfile's runtime stage; it must be
 *   `node bin/vexil.js`, which runs src/cli/main.ts here, under tsx) with the container's `args`.
 * - Environment: the runtime stage's `ENV` lines, then the container's `env` (later wins, as in
 *   Kubernetes), with `secretKeyRef` values taken from the caller's table of test values.
 * - Volumes: each mounted volume becomes a folder under the temporary folder: a ConfigMap's keys
 *   as files, a projected service-account token and the cluster CA as the files the caller gives,
 *   an emptyDir or a claim as an empty folder. Every absolute path in the config file, the
 *   arguments and the environment that lies under a mount path is moved onto that folder.
 *
 * Anything this mapping cannot reproduce (`command`, `$(VAR)` references, other `valueFrom`
 * sources, volume types not listed) throws, so a manifest change cannot go untested silently.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import type { K8sObject } from './kustomize-render.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const DOCKERFILE = join(REPO, 'Dockerfile');

type Tree = Record<string, any>;

export interface ImageDefaults {
  readonly entrypoint: readonly string[];
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
}

/** ENTRYPOINT, WORKDIR and ENV of the Dockerfile's last stage (the image that runs). */
export function readImageDefaults(dockerfile = DOCKERFILE): ImageDefaults {
  const text = readFileSync(dockerfile, 'utf8').replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM\s.*$/m);
  const last = stages[stages.length - 1]!;
  const env: Record<string, string> = {};
  let entrypoint: string[] | undefined;
  let workdir = '/';
  for (const line of last.split('\n').map((l) => l.trim())) {
    const m = /^(ENV|ENTRYPOINT|WORKDIR)\s+(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'WORKDIR') workdir = m[2]!.trim();
    if (m[1] === 'ENTRYPOINT') entrypoint = JSON.parse(m[2]!) as string[];
    if (m[1] === 'ENV') {
      for (const pair of m[2]!.trim().split(/\s+/)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new Error(`Dockerfile: ENV ${pair}: only KEY=value pairs are read`);
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    }
  }
  if (entrypoint === undefined) throw new Error('Dockerfile: the runtime stage has no ENTRYPOINT (exec form)');
  return { entrypoint, workdir, env };
}

export interface PodFiles {
  /** Test values of `secretKeyRef`s, by `<secret name>/<key>`. */
  readonly secrets: Readonly<Record<string, string>>;
  /** The projected service-account token's content. */
  readonly serviceAccountToken: string;
  /** PEM of the cluster CA (the `kube-root-ca.crt` ConfigMap's `ca.crt`). */
  readonly clusterCaPem: string;
}

export interface LocalPod {
  /** The temporary folder (removed by `remove()`). */
  readonly root: string;
  /** The container's `args` with paths moved (the entrypoint is checked, not run). */
  readonly args: readonly string[];
  /** The image's and the container's environment, paths moved. */
  readonly env: Readonly<Record<string, string>>;
  /** Mount path → local folder. */
  readonly mounts: ReadonlyMap<string, { dir: string; readOnly: boolean }>;
  /** Moves an absolute container path under its mount (unchanged when under none). */
  localPath(containerPath: string): string;
  remove(): void;
}

/** The one Deployment's container named `container` (default: its only one). */
export function vexilContainer(objects: readonly K8sObject[], container = 'vexil'): { pod: Tree; container: Tree } {
  const deployments = objects.filter((o) => o.kind === 'Deployment') as Tree[];
  if (deployments.length !== 1) throw new Error(`expected one Deployment, got ${deployments.length}`);
  const pod = deployments[0]!.spec.template.spec as Tree;
  const c = (pod.containers as Tree[]).find((x) => x.name === container);
  if (c === undefined) throw new Error(`no container ${container}`);
  return { pod, container: c };
}

/** Lays out the container of `objects` under a new temporary folder (see the header). */
export function preparePod(objects: readonly K8sObject[], files: PodFiles, image = readImageDefaults()): LocalPod {
  const { pod, container } = vexilContainer(objects);
  if (container.command !== undefined) throw new Error('container.command replaces the image entrypoint: not reproduced here');
  if (JSON.stringify(image.entrypoint) !== JSON.stringify(['node', 'bin/vexil.js'])) {
    throw new Error(`the image's ENTRYPOINT is ${JSON.stringify(image.entrypoint)}; this harness runs only node bin/vexil.js`);
  }
  const root = mkdtempSync(join(tmpdir(), 'vexil-pod-'));
  const mounts = new Map<string, { dir: string; readOnly: boolean }>();
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, (o as Tree).data as Record<string, string>]));
  const volumes = new Map(((pod.volumes ?? []) as Tree[]).map((v) => [v.name as string, v]));

  const mounted: Array<{ mountPath: string; dir: string; volume: Tree }> = [];
  for (const m of (container.volumeMounts ?? []) as Tree[]) {
    const volume = volumes.get(m.name);
    if (volume === undefined) throw new Error(`volumeMount ${m.mountPath}: no volume ${m.name}`);
    if (m.subPath !== undefined) throw new Error(`volumeMount ${m.mountPath}: subPath is not reproduced here`);
    const dir = join(root, 'volumes', m.name);
    mkdirSync(dir, { recursive: true });
    mounts.set(m.mountPath, { dir, readOnly: m.readOnly === true });
    mounted.push({ mountPath: m.mountPath, dir, volume });
  }
  const byLength = [...mounts.keys()].sort((a, b) => b.length - a.length);
  const localPath = (p: string): string => {
    for (const mp of byLength) {
      if (p === mp || p.startsWith(`${mp}/`)) return mounts.get(mp)!.dir + p.slice(mp.length);
    }
    return p;
  };
  const movePaths = (value: unknown): unknown => {
    if (typeof value === 'string') return value.startsWith('/') ? localPath(value) : value;
    if (Array.isArray(value)) return value.map(movePaths);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, movePaths(v)]));
    return value;
  };

  for (const { mountPath, dir, volume } of mounted) {
    const write = (name: string, text: string) => {
      const file = join(dir, name);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    };
    if (volume.configMap !== undefined) {
      const data = configMaps.get(volume.configMap.name);
      if (data === undefined) throw new Error(`volume ${volume.name}: ConfigMap ${volume.configMap.name} is not in the manifests`);
      if (volume.configMap.items !== undefined) throw new Error(`volume ${volume.name}: configMap items are not reproduced here`);
      // The config file's own paths point into the pod: moved like every other path.
      for (const [key, text] of Object.entries(data)) write(key, /\.ya?ml$/.test(key) ? stringify(movePaths(parse(text))) : text);
    } else if (volume.projected !== undefined) {
      for (const source of volume.projected.sources as Tree[]) {
        if (source.serviceAccountToken !== undefined) write(source.serviceAccountToken.path, files.serviceAccountToken);
        else if (source.configMap?.name === 'kube-root-ca.crt') {
          for (const item of source.configMap.items as Tree[]) if (item.key === 'ca.crt') write(item.path, files.clusterCaPem);
        } else throw new Error(`volume ${volume.name}: projected source ${JSON.stringify(source)} is not reproduced here`);
      }
    } else if (volume.emptyDir === undefined && volume.persistentVolumeClaim === undefined) {
      throw new Error(`volume ${volume.name} at ${mountPath}: its type is not reproduced here`);
    }
  }

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(image.env)) env[k] = localPath(v);
  for (const e of (container.env ?? []) as Tree[]) {
    if (e.value !== undefined) {
      if (String(e.value).includes('$(')) throw new Error(`env ${e.name}: $(VAR) references are not reproduced here`);
      env[e.name] = localPath(String(e.value));
    } else if (e.valueFrom?.secretKeyRef !== undefined) {
      const ref = `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`;
      const value = files.secrets[ref];
      if (value === undefined) throw new Error(`env ${e.name}: no test value for Secret key ${ref}`);
      env[e.name] = value;
    } else {
      throw new Error(`env ${e.name}: only value and valueFrom.secretKeyRef are reproduced here`);
    }
  }
  const args = ((container.args ?? []) as string[]).map((a) => {
    if (a.includes('$(')) throw new Error(`args: $(VAR) references are not reproduced here`);
    return localPath(a);
  });
  return { root, args, env, mounts, localPath, remove: () => rmSync(root, { recursive: true, force: true }) };
}
