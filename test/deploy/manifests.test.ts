/**
 * deploy/kubernetes/: the base and both overlays, rendered (kustomize-render.ts), pass the
 * Kubernetes v1.36 schemas (kubernetes-models 5.1.0), the unknown-field check and the API server's
 * rules (manifest-checks.ts), and carry a vexil config that vexil's own loader accepts with the
 * pod's environment (config-check.ts). Each check is also shown failing on a broken copy, the
 * config check included: a manifest change that breaks the config fails here.
 */
import t from 'tap';
import { parse, stringify } from 'yaml';
import { checkConfig } from './config-check.js';
import type { K8sObject } from './kustomize-render.js';
import { vexilContainer } from './local-pod.js';
import { render, RENDERINGS, TEST_FILES } from './pod-values.js';
import { schemaProblems, serverRuleProblems, unknownFieldProblems } from './manifest-checks.js';

/** vexil's liveness (the process serves) and readiness (a current snapshot) routes: src/server/meta/routes.ts. */
const PROBE_PATHS = { liveness: ['/health'], readiness: ['/ready'] };

const clone = (objects: readonly K8sObject[]) => structuredClone(objects) as Array<K8sObject & Record<string, any>>;
const find = (objects: readonly K8sObject[], kind: string) => objects.find((o) => o.kind === kind) as K8sObject & Record<string, any>;

for (const name of RENDERINGS) {
  t.test(`${name}: valid manifests with a valid vexil config`, async (t) => {
    const objects = render(name);
    t.strictSame(
      objects.map((o) => o.kind).sort(),
      ['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'ServiceAccount', ...(name.endsWith('sqlite') ? ['PersistentVolumeClaim'] : [])].sort(),
    );
    t.strictSame(await schemaProblems(objects), [], 'the Kubernetes schemas');
    t.strictSame(unknownFieldProblems(objects), [], 'no field the API does not define');
    t.strictSame(serverRuleProblems(objects, PROBE_PATHS), [], 'the API server rules and references');
    const check = checkConfig(objects, TEST_FILES);
    t.strictSame(check.problems, [], 'vexil loads the config with the pod environment');

    const { pod, container } = vexilContainer(objects);
    t.equal(pod.enableServiceLinks, false);
    t.equal(pod.automountServiceAccountToken, false, 'only the projected token is mounted');
    t.equal(pod.securityContext.runAsNonRoot, true);
    t.equal(container.securityContext.readOnlyRootFilesystem, true);
    t.ok(container.resources.requests.cpu && container.resources.requests.memory, 'resource requests');
    t.equal(check.config?.authentication.methods.cluster.enabled, true);
    t.equal(check.config?.storage.git.authentication.basic?.password, TEST_FILES.secrets['vexil-git/password'], 'Git password from the Secret');
    t.equal(check.config?.webhooks.github.secret, TEST_FILES.secrets['vexil-webhook/secret'], 'webhook secret from the Secret');
  });
}

t.test('the overlays say what they are for', async (t) => {
  const single = render('overlays/single-sqlite');
  const replicas = render('overlays/replicas-postgres');
  t.equal(find(single, 'Deployment').spec.replicas, 1);
  t.equal(find(single, 'Deployment').spec.strategy.type, 'Recreate', 'one pod at a time owns the SQLite file');
  t.strictSame(
    vexilContainer(single).pod.volumes.find((v: { name: string }) => v.name === 'data'),
    { name: 'data', persistentVolumeClaim: { claimName: 'vexil-data' } },
  );
  t.equal(checkConfig(single, TEST_FILES).config?.authentication.storage.type, 'sqlite');

  t.equal(find(replicas, 'Deployment').spec.replicas, 3);
  t.strictSame(find(replicas, 'PodDisruptionBudget').spec.minAvailable, 2);
  const config = checkConfig(replicas, TEST_FILES).config!;
  t.equal(config.authentication.storage.type, 'postgres');
  t.equal(config.authentication.storage.postgres.url, TEST_FILES.secrets['vexil-database/url']);
  t.equal(config.cluster.coordination.type, 'postgres');
  t.equal(config.cluster.coordination.postgres?.url, TEST_FILES.secrets['vexil-database/url']);

  // The overlay's config is the base's plus the database: nothing else drifted apart.
  const text = (objects: readonly K8sObject[]) => parse(find(objects, 'ConfigMap').data['config.yaml'] as string) as Record<string, any>;
  const base = text(render('base'));
  const postgres = text(replicas);
  delete base.authentication.storage;
  delete postgres.authentication.storage;
  delete postgres.cluster;
  t.strictSame(postgres, base);
});

t.test('each check fails on a broken copy', async (t) => {
  const objects = render('base');

  const schema = clone(objects);
  find(schema, 'Deployment').spec.replicas = 'two';
  find(schema, 'Deployment').spec.template.spec.containers[0].resources.requests.cpu = 'lots';
  const found = await schemaProblems(schema);
  for (const expected of [/\/spec\/replicas must be integer/, /requests\/cpu must match format "quantity"/]) {
    t.ok(found.some((p) => expected.test(p)), `schema problem ${expected}`);
  }

  const unknown = clone(objects);
  find(unknown, 'Deployment').spec.replica = 3;
  find(unknown, 'Deployment').spec.template.spec.containers[0].readinessProbe.httpGet.pth = '/ready';
  find(unknown, 'Service').spec.selectr = {};
  t.match(unknownFieldProblems(unknown).sort(), [
    /Deployment\/vexil: \/spec\/replica is not a field/,
    /Deployment\/vexil: \/spec\/template\/spec\/containers\/0\/readinessProbe\/httpGet\/pth is not a field/,
    /Service\/vexil: \/spec\/selectr is not a field/,
  ]);

  const rules = clone(objects);
  const deployment = find(rules, 'Deployment');
  const container = deployment.spec.template.spec.containers[0];
  container.ports[0].containerPort = 70000;
  container.livenessProbe.httpGet.path = '/ready';
  container.startupProbe.httpGet.port = 'metrics';
  delete container.readinessProbe;
  deployment.spec.strategy = { type: 'Recreate', rollingUpdate: { maxSurge: 1 } };
  deployment.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'data').persistentVolumeClaim = { claimName: 'vexil-data' };
  container.volumeMounts.push({ name: 'missing', mountPath: '/var/lib/missing' });
  find(rules, 'PodDisruptionBudget').spec.minAvailable = 1;
  find(rules, 'Service').spec.ports[0].targetPort = 'web';
  t.match(serverRuleProblems(rules, PROBE_PATHS), [
    /strategy.rollingUpdate may not be set with type Recreate/,
    /volume data must have exactly one source \(has emptyDir, persistentVolumeClaim\)/,
    /volume data names claim vexil-data, which is not in the manifests/,
    /containerPort 70000 is outside 1-65535/,
    /volumeMount \/var\/lib\/missing names volume missing/,
    /startupProbe port metrics is not a port of the container/,
    /livenessProbe path \/ready is not one of \/health/,
    /no readinessProbe/,
    /Service\/vexil: targetPort web is no container port/,
    /exactly one of spec.minAvailable and spec.maxUnavailable must be set \(has minAvailable, maxUnavailable\)/,
    /minAvailable 1 with 1 replicas blocks every voluntary eviction/,
  ]);

  const removed = clone(objects);
  find(removed, 'PodDisruptionBudget').apiVersion = 'policy/v1beta1';
  t.match(serverRuleProblems(removed, PROBE_PATHS), [/apiVersion policy\/v1beta1 is not the current policy\/v1/]);
});

t.test('a manifest change that breaks the config check fails', async (t) => {
  const objects = render('base');
  const withConfig = (edit: (config: Record<string, any>) => void) => {
    const copy = clone(objects);
    const cm = find(copy, 'ConfigMap');
    const config = parse(cm.data['config.yaml'] as string) as Record<string, any>;
    edit(config);
    cm.data['config.yaml'] = stringify(config);
    return copy;
  };

  t.match(checkConfig(withConfig((c) => (c.storage.git.repo = c.storage.git.repository)), TEST_FILES).problems, [
    /^storage\.git\.repo: unknown key .*did you mean "ref"/,
  ]);
  t.match(checkConfig(withConfig((c) => (c.server.http_port = 'eighty')), TEST_FILES).problems, [/^server\.http_port: must be an integer/]);
  t.match(checkConfig(withConfig((c) => (c.storage.git.authentication.basic.password = 'hunter2')), TEST_FILES).problems, [
    /storage\.git\.authentication\.basic\.password: a credential written in the ConfigMap/,
  ]);
  t.match(checkConfig(withConfig((c) => (c.storage.git.cache_dir = '/app/.cache')), TEST_FILES).problems, [
    /storage\.git\.cache_dir: \/app\/\.cache is on the read-only root filesystem/,
  ]);

  // The Secret reference removed from the Deployment: the placeholder has no variable.
  const noSecret = clone(objects);
  const env = vexilContainer(noSecret).container.env as Array<{ name: string }>;
  env.splice(env.findIndex((e) => e.name === 'WEBHOOK_SECRET'), 1);
  t.match(checkConfig(noSecret, TEST_FILES).problems, [
    /webhooks\.github\.secret: \$\{WEBHOOK_SECRET\} is not set from a Secret/,
    /webhooks\.github\.secret: environment variable WEBHOOK_SECRET is not set/,
  ]);

  // The config's volume mounted read-only elsewhere: --config names no file of the ConfigMap.
  const moved = clone(objects);
  (vexilContainer(moved).container.volumeMounts as Array<{ name: string; mountPath: string }>).find((m) => m.name === 'config')!.mountPath = '/etc/config';
  t.match(checkConfig(moved, TEST_FILES).problems, [/\/etc\/vexil\/config.yaml: not a key of a ConfigMap mounted/]);
});
