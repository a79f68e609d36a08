/**
 * Checks of rendered Kubernetes manifests without a cluster, each returning located problems
 * (`<apiVersion> <Kind>/<name>: <path> <message>`), empty when the manifests pass:
 * - schemaProblems: the Kubernetes v1.36 OpenAPI schemas, as compiled by kubernetes-models 5.1.0
 *   (types, required fields, enums, quantity formats);
 * - unknownFieldProblems: fields the API does not define (a misspelt `replica:`), which those
 *   schemas let through: each object is checked as a TypeScript literal of kubernetes-models'
 *   interface for its kind, by walking the literal with the type checker (every unknown field is
 *   reported, not only the first);
 * - serverRuleProblems: rules the API server enforces beyond the schema (port ranges, one source
 *   per volume, a PodDisruptionBudget with one of minAvailable/maxUnavailable, no rollingUpdate
 *   with Recreate, selectors that select the pods) and references between the resources (volume
 *   mounts, configMaps, the service account, named ports), plus vexil's own probe rules.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { resourceId, type K8sObject } from './kustomize-render.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** API versions current in Kubernetes 1.36 for the kinds vexil's manifests use. */
const CURRENT_API_VERSIONS: Readonly<Record<string, string>> = {
  ServiceAccount: 'v1',
  ConfigMap: 'v1',
  Service: 'v1',
  PersistentVolumeClaim: 'v1',
  Deployment: 'apps/v1',
  PodDisruptionBudget: 'policy/v1',
};

/** ConfigMaps Kubernetes publishes in every namespace (the cluster's CA bundle). */
const CLUSTER_CONFIGMAPS = new Set(['kube-root-ca.crt']);

/** The volume sources of Kubernetes' Volume (one of them per volume). */
const VOLUME_SOURCES = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'configMap', 'csi', 'downwardAPI', 'emptyDir',
  'ephemeral', 'fc', 'flexVolume', 'flocker', 'gcePersistentDisk', 'gitRepo', 'glusterfs', 'hostPath', 'image', 'iscsi',
  'nfs', 'persistentVolumeClaim', 'photonPersistentDisk', 'portworxVolume', 'projected', 'quobyte', 'rbd', 'scaleIO',
  'secret', 'storageos', 'vsphereVolume',
];

const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Tree = Record<string, any>;

/** kubernetes-models' validation (ajv, compiled from the OpenAPI schemas). */
export async function schemaProblems(objects: readonly K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    let Model: (new (data: unknown) => { validate(): void }) | undefined;
    try {
      Model = ((await import(`kubernetes-models/${o.apiVersion}/${o.kind}`)) as Record<string, typeof Model>)[o.kind];
    } catch {
      Model = undefined;
    }
    if (Model === undefined) {
      problems.push(`${resourceId(o)}: no schema for this apiVersion and kind`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (err) {
      const errors = (err as { errors?: Array<{ instancePath: string; message?: string; params?: unknown }> }).errors;
      if (errors === undefined) throw err;
      for (const e of errors) problems.push(`${resourceId(o)}: ${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params ?? {})}`);
    }
  }
  return problems;
}

/** Fields the Kubernetes API does not define, found with the TypeScript checker (see the header). */
export function unknownFieldProblems(objects: readonly K8sObject[]): string[] {
  const file = join(REPO, 'test/deploy/__rendered-manifests__.ts');
  const lines = objects.map((o, i) => {
    const type = `import('kubernetes-models/${o.apiVersion}/${o.kind}').I${o.kind}`;
    return `export const m${i}: ${type} = ${JSON.stringify(o)};`;
  });
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const problems: string[] = [];
  // A type that did not resolve (a kind kubernetes-models lacks) would make every field "known".
  for (const d of program.getSemanticDiagnostics(source)) {
    if (d.code === 2307 || d.code === 2694) problems.push(`type not found: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  }
  const hasProperty = (type: ts.Type, name: string): boolean => {
    const t = checker.getNonNullableType(type);
    if (t.isUnion()) return t.types.some((m) => hasProperty(m, name));
    if (t.flags & ts.TypeFlags.Any) return true;
    return t.getProperty(name) !== undefined || checker.getIndexInfosOfType(t).length > 0;
  };
  const walk = (node: ts.Node, path: string, id: string) => {
    if (ts.isObjectLiteralExpression(node)) {
      const type = checker.getContextualType(node);
      for (const prop of node.properties) {
        if (!ts.isPropertyAssignment(prop)) continue;
        const name = ts.isStringLiteral(prop.name) ? prop.name.text : prop.name.getText(source);
        if (type !== undefined && !hasProperty(type, name)) problems.push(`${id}: ${path}/${name} is not a field of ${checker.typeToString(checker.getNonNullableType(type))}`);
        walk(prop.initializer, `${path}/${name}`, id);
      }
    } else if (ts.isArrayLiteralExpression(node)) {
      node.elements.forEach((e, i) => walk(e, `${path}/${i}`, id));
    }
  };
  let index = 0;
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const decl = statement.declarationList.declarations[0]!;
    walk(decl.initializer!, '', resourceId(objects[index++]!));
  }
  return problems;
}

/**
 * Server-side rules and cross-references (see the header). `vexilProbePaths`: vexil's liveness
 * route(s) (for the startup and liveness probes) and readiness route(s).
 */
export function serverRuleProblems(objects: readonly K8sObject[], vexilProbePaths: { liveness: readonly string[]; readiness: readonly string[] }): string[] {
  const problems: string[] = [];
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind) as Tree[];
  const configMaps = new Set(byKind('ConfigMap').map((c) => c.metadata.name as string));
  const serviceAccounts = new Set(byKind('ServiceAccount').map((s) => s.metadata.name as string));
  const claims = new Set(byKind('PersistentVolumeClaim').map((s) => s.metadata.name as string));
  const validPort = (p: unknown) => Number.isInteger(p) && (p as number) >= 1 && (p as number) <= 65535;

  for (const o of objects) {
    const id = resourceId(o);
    const current = CURRENT_API_VERSIONS[o.kind];
    if (current === undefined) problems.push(`${id}: kind not expected in vexil's manifests`);
    else if (o.apiVersion !== current) problems.push(`${id}: apiVersion ${o.apiVersion} is not the current ${current}`);
    if (!DNS_1123_SUBDOMAIN.test(o.metadata.name) || o.metadata.name.length > 253) problems.push(`${id}: metadata.name is not a DNS-1123 subdomain`);
  }

  const deployments = byKind('Deployment');
  const podLabelSets = deployments.map((d) => (d.spec?.template?.metadata?.labels ?? {}) as Record<string, string>);
  const selects = (selector: Record<string, string> | undefined) =>
    selector !== undefined && Object.keys(selector).length > 0 && podLabelSets.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v));

  for (const d of deployments) {
    const id = resourceId(d as K8sObject);
    const spec = d.spec ?? {};
    if (!selects(spec.selector?.matchLabels)) problems.push(`${id}: spec.selector does not select the pod template's labels`);
    if (spec.strategy?.type === 'Recreate' && spec.strategy.rollingUpdate !== undefined) problems.push(`${id}: spec.strategy.rollingUpdate may not be set with type Recreate`);
    const pod = spec.template?.spec ?? {};
    const volumes = (pod.volumes ?? []) as Tree[];
    const volumeNames = new Set<string>();
    for (const v of volumes) {
      if (volumeNames.has(v.name)) problems.push(`${id}: volume ${v.name} is defined twice`);
      volumeNames.add(v.name);
      const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined);
      if (sources.length !== 1) problems.push(`${id}: volume ${v.name} must have exactly one source (has ${sources.join(', ') || 'none'})`);
      if (v.configMap !== undefined && !configMaps.has(v.configMap.name) && !CLUSTER_CONFIGMAPS.has(v.configMap.name)) problems.push(`${id}: volume ${v.name} names ConfigMap ${v.configMap.name}, which is not in the manifests`);
      if (v.persistentVolumeClaim !== undefined && !claims.has(v.persistentVolumeClaim.claimName)) problems.push(`${id}: volume ${v.name} names claim ${v.persistentVolumeClaim.claimName}, which is not in the manifests`);
      for (const s of (v.projected?.sources ?? []) as Tree[]) {
        if (s.configMap !== undefined && !configMaps.has(s.configMap.name) && !CLUSTER_CONFIGMAPS.has(s.configMap.name)) problems.push(`${id}: volume ${v.name} projects ConfigMap ${s.configMap.name}, which is not in the manifests`);
        if (s.serviceAccountToken !== undefined && (s.serviceAccountToken.expirationSeconds ?? 3600) < 600) problems.push(`${id}: volume ${v.name}: serviceAccountToken.expirationSeconds must be at least 600`);
      }
    }
    if (pod.serviceAccountName !== undefined && !serviceAccounts.has(pod.serviceAccountName)) problems.push(`${id}: serviceAccountName ${pod.serviceAccountName} is not in the manifests`);
    for (const c of (pod.containers ?? []) as Tree[]) {
      const at = `${id}: container ${c.name}`;
      const portNames = new Set<string>();
      for (const p of (c.ports ?? []) as Tree[]) {
        if (!validPort(p.containerPort)) problems.push(`${at}: containerPort ${p.containerPort} is outside 1-65535`);
        if (p.hostPort !== undefined && !validPort(p.hostPort)) problems.push(`${at}: hostPort ${p.hostPort} is outside 1-65535`);
        if (p.name !== undefined) portNames.add(p.name);
      }
      const mountPaths = new Set<string>();
      for (const m of (c.volumeMounts ?? []) as Tree[]) {
        if (!volumeNames.has(m.name)) problems.push(`${at}: volumeMount ${m.mountPath} names volume ${m.name}, which the pod does not define`);
        if (mountPaths.has(m.mountPath)) problems.push(`${at}: mountPath ${m.mountPath} is mounted twice`);
        mountPaths.add(m.mountPath);
      }
      const envNames = new Set<string>();
      for (const e of (c.env ?? []) as Tree[]) {
        if (envNames.has(e.name)) problems.push(`${at}: env ${e.name} is set twice`);
        envNames.add(e.name);
      }
      const probe = (kind: string, allowed: readonly string[]) => {
        const p = c[kind] as Tree | undefined;
        if (p === undefined) return problems.push(`${at}: no ${kind}`);
        const get = p.httpGet as Tree | undefined;
        if (get === undefined) return problems.push(`${at}: ${kind} is not an HTTP GET`);
        if (!allowed.includes(get.path)) problems.push(`${at}: ${kind} path ${get.path} is not one of ${allowed.join(', ')}`);
        if (typeof get.port === 'string' ? !portNames.has(get.port) : !validPort(get.port)) problems.push(`${at}: ${kind} port ${get.port} is not a port of the container`);
        return undefined;
      };
      probe('startupProbe', vexilProbePaths.liveness);
      probe('livenessProbe', vexilProbePaths.liveness);
      probe('readinessProbe', vexilProbePaths.readiness);
    }
  }

  for (const s of byKind('Service')) {
    const id = resourceId(s as K8sObject);
    if (!selects(s.spec?.selector)) problems.push(`${id}: spec.selector selects no pod template`);
    const containerPorts = deployments.flatMap((d) => ((d.spec?.template?.spec?.containers ?? []) as Tree[]).flatMap((c) => (c.ports ?? []) as Tree[]));
    for (const p of (s.spec?.ports ?? []) as Tree[]) {
      if (!validPort(p.port)) problems.push(`${id}: port ${p.port} is outside 1-65535`);
      const target = p.targetPort ?? p.port;
      const found = typeof target === 'string' ? containerPorts.some((c) => c.name === target) : containerPorts.some((c) => c.containerPort === target);
      if (!found) problems.push(`${id}: targetPort ${target} is no container port of the selected pods`);
    }
  }

  for (const b of byKind('PodDisruptionBudget')) {
    const id = resourceId(b as K8sObject);
    const set = ['minAvailable', 'maxUnavailable'].filter((k) => b.spec?.[k] !== undefined);
    if (set.length !== 1) problems.push(`${id}: exactly one of spec.minAvailable and spec.maxUnavailable must be set (has ${set.join(', ') || 'neither'})`);
    if (!selects(b.spec?.selector?.matchLabels)) problems.push(`${id}: spec.selector selects no pod template`);
    const replicas = deployments.find((d) => selects(b.spec?.selector?.matchLabels))?.spec?.replicas ?? 1;
    if (typeof b.spec?.minAvailable === 'number' && b.spec.minAvailable >= replicas) problems.push(`${id}: minAvailable ${b.spec.minAvailable} with ${replicas} replicas blocks every voluntary eviction`);
  }
  return problems;
}

