/**
 * The vexil config of rendered manifests, checked as `vexil serve` would read it in the pod: the
 * ConfigMap's file named by the container's `--config` argument, with the image's and the
 * container's environment (Secret values from the caller's test table), through vexil's own
 * loader (src/config/load.ts: schema, placeholders, environment overrides, cross-key rules).
 * Then the rules of a read-only, secret-free deployment:
 * - a key holding a secret (password, token, secret, database or Redis URL) is a `${NAME}`
 *   placeholder, and NAME comes from a Secret (valueFrom.secretKeyRef), never a literal;
 * - every absolute path in the config lies under a volume mount (the root filesystem is
 *   read-only), and a path vexil writes (the Git mirror, the SQLite file, data_dir) under a
 *   writable one.
 */
import { parse } from 'yaml';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import type { K8sObject } from './kustomize-render.js';
import { preparePod, REPO, vexilContainer, type LocalPod, type PodFiles } from './local-pod.js';

type Tree = Record<string, any>;

/** Keys whose values are credentials (matched on the dotted path). */
const SECRET_KEY = /(^|\.)(password|secret|token|access_token|client_secret)$|\.(postgres|redis)\.url$/;
/** Keys naming something vexil writes. */
const WRITTEN_KEYS = ['storage.git.cache_dir', 'authentication.storage.sqlite.path', 'data_dir', 'storage.oci.bundles_directory'];
const PLACEHOLDER = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface ConfigCheck {
  /** The loaded config, when it passed vexil's loader. */
  readonly config?: Config;
  /** Every problem: the loader's (`path: message`) and the deployment rules'. */
  readonly problems: readonly string[];
}

/** The container's `--config FILE` argument (as written in the manifest). */
export function configArgument(objects: readonly K8sObject[]): string {
  const args = (vexilContainer(objects).container.args ?? []) as string[];
  const at = args.findIndex((a) => a === '--config' || a === '-c');
  if (args[0] !== 'serve' || at < 0 || args[at + 1] === undefined) throw new Error(`container args ${JSON.stringify(args)}: expected serve --config FILE`);
  return args[at + 1]!;
}

export function checkConfig(objects: readonly K8sObject[], files: PodFiles): ConfigCheck {
  const pod = preparePod(objects, files);
  try {
    return checkPreparedConfig(objects, pod);
  } finally {
    pod.remove();
  }
}

/** As checkConfig, on a pod already laid out (the caller removes it). */
export function checkPreparedConfig(objects: readonly K8sObject[], pod: LocalPod): ConfigCheck {
  const problems: string[] = [];
  const file = configArgument(objects);
  const { container } = vexilContainer(objects);
  const fromSecrets = new Set(((container.env ?? []) as Tree[]).filter((e) => e.valueFrom?.secretKeyRef !== undefined).map((e) => e.name as string));

  // The file as the ConfigMap holds it (not moved), for the deployment rules.
  const mountDir = [...pod.mounts.keys()].sort((a, b) => b.length - a.length).find((m) => file.startsWith(`${m}/`));
  const volume = mountDir === undefined ? undefined : ((vexilContainer(objects).container.volumeMounts ?? []) as Tree[]).find((m) => m.mountPath === mountDir);
  const configMapName = volume === undefined ? undefined : ((vexilContainer(objects).pod.volumes ?? []) as Tree[]).find((v) => v.name === volume.name)?.configMap?.name;
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMapName) as Tree | undefined;
  const text = mountDir === undefined ? undefined : (configMap?.data?.[file.slice(mountDir.length + 1)] as string | undefined);
  if (text === undefined) return { problems: [`${file}: not a key of a ConfigMap mounted in the container`] };

  const walk = (node: unknown, path: string[]) => {
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
      for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
      return;
    }
    const key = path.join('.');
    if (SECRET_KEY.test(key)) {
      const m = typeof node === 'string' ? PLACEHOLDER.exec(node) : null;
      if (m === null) problems.push(`${key}: a credential written in the ConfigMap (use \${NAME} and a Secret)`);
      else if (!fromSecrets.has(m[1]!)) problems.push(`${key}: \${${m[1]}} is not set from a Secret in the container's env`);
    }
    if (typeof node === 'string' && node.startsWith('/')) {
      const mount = [...pod.mounts.entries()].find(([mp]) => node === mp || node.startsWith(`${mp}/`));
      if (mount === undefined) problems.push(`${key}: ${node} is on the read-only root filesystem (no volume is mounted there)`);
      else if (WRITTEN_KEYS.includes(key) && mount[1].readOnly) problems.push(`${key}: ${node} is on a read-only mount`);
    }
  };
  walk(parse(text), []);
  for (const [name, value] of Object.entries(pod.env)) {
    if (name === 'VEXIL_DATA_DIR' && ![...pod.mounts.values()].some((m) => !m.readOnly && (value === m.dir || value.startsWith(`${m.dir}/`)))) {
      problems.push(`data_dir (${name} of the image) is not on a writable volume`);
    }
  }

  try {
    const config = loadConfig({ file: pod.localPath(file), env: pod.env, cwd: REPO });
    return { config, problems };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { problems: [...problems, ...err.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message))] };
  }
}
