/**
 * The pods of deploy/kubernetes/ started on this machine (local-pod.ts): each rendering's container
 * command line (the image's entrypoint and the manifest's args), environment (the image's ENV, the
 * manifest's env with Secret test values) and volumes (the ConfigMap's config, the projected token
 * and CA, empty cache/tmp/data folders) run as `vexil serve` against real servers standing in for
 * the cluster's: a `git http-backend` that requires the Git Secret's credentials, a loopback OIDC
 * discovery + JWKS over HTTPS (the API server's service-account issuer) that requires the projected
 * token, and for replicas-postgres a throwaway PostgreSQL whose URL is the database Secret.
 *
 * Only what a laptop cannot have is changed, through the environment vexil reads anyway: the
 * repository URL and the discovery URL point at those servers, and the listener is loopback on a
 * free port (the probes' named port is checked to be the config's http_port instead).
 *
 * Each pod then answers every probe of its manifest with 200, exchanges a projected
 * service-account token for a client token, evaluates a flag with it, accepts a GitHub ping signed
 * with the webhook Secret, keeps its writes on its volumes, and stops with exit code 0 on SIGTERM.
 * Two more pods show why the manifests are as they are: one whose cache volume is read-only does
 * not start (the root filesystem really is read-only for vexil here), and one whose first clone is
 * held back by the Git server does not listen until the clone is done (what the startup probe covers).
 */
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { makeTestCertificates } from '../support/git-tls.js';
import { startJwtIssuer } from '../support/jwt-issuer.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { freePort, postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { checkPreparedConfig } from './config-check.js';
import { preparePod, vexilContainer } from './local-pod.js';
import { isolationUnavailableReason, startPodProcess } from './pod-process.js';
import { render, RENDERINGS, TEST_FILES } from './pod-values.js';

type Tree = Record<string, any>;

const [gitUser, gitPassword] = [TEST_FILES.secrets['vexil-git/username']!, TEST_FILES.secrets['vexil-git/password']!];
const webhookSecret = TEST_FILES.secrets['vexil-webhook/secret']!;

async function json(res: Response): Promise<Tree> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Tree;
  } catch {
    return { text };
  }
}

for (const name of RENDERINGS) {
  const postgres = name.endsWith('postgres');
  const reason = gitUnavailableReason() ?? (postgres ? postgresUnavailableReason() : undefined);
  t.test(`${name}: the pod's command line, environment and volumes serve`, { skip: reason !== undefined && !isCI() ? reason : false }, async (t) => {
    if (reason !== undefined) reportMissing(t, postgres ? 'git and PostgreSQL' : 'git', reason);
    const objects = render(name);
    const git = await startGitFixture(t, { user: `${gitUser}:${gitPassword}` });
    await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
    const certs = await makeTestCertificates(t);
    const issuer = await startJwtIssuer(t, { tls: { key: certs.key, cert: certs.cert }, requireBearer: TEST_FILES.serviceAccountToken });
    const secrets = { ...TEST_FILES.secrets };
    if (postgres) {
      const db = await startPostgres();
      t.teardown(() => db.close());
      secrets['vexil-database/url'] = db.url;
    }

    // One pod per replica of the manifest, at most two (enough for one leader and one follower).
    const replicas = Math.min(2, (objects.find((o) => o.kind === 'Deployment') as Tree).spec.replicas as number);
    const urls: string[] = [];
    const stops: Array<() => Promise<number | null>> = [];
    const pods: Array<ReturnType<typeof preparePod>> = [];
    for (let i = 0; i < replicas; i++) {
      const pod = preparePod(objects, { secrets, serviceAccountToken: TEST_FILES.serviceAccountToken, clusterCaPem: readFileSync(certs.caPath, 'utf8') });
      t.teardown(() => pod.remove());
      pods.push(pod);
      const check = checkPreparedConfig(objects, pod);
      t.strictSame(check.problems, [], 'the config passes the check with these Secrets');
      const { container } = vexilContainer(objects);
      const httpPort = (container.ports as Tree[]).find((p) => p.name === container.readinessProbe.httpGet.port);
      t.equal(httpPort?.containerPort, check.config?.server.http_port, "the probes' named port is the config's http_port");

      const started = await startPodProcess(t, pod, {
        VEXIL_STORAGE_GIT_REPOSITORY: git.url,
        VEXIL_AUTHENTICATION_METHODS_CLUSTER_DISCOVERY_URL: issuer.url,
        VEXIL_SERVER_HOST: '127.0.0.1',
        VEXIL_SERVER_HTTP_PORT: '0',
      });
      if (i === 0) {
        const why = isolationUnavailableReason();
        if (why === undefined) t.ok(started.isolated, 'read-only root filesystem, uid 1000, writable volumes only');
        else reportMissing(t, 'the read-only root filesystem and uid 1000', why);
      }
      urls.push(started.url);
      stops.push(() => started.stop());
    }

    await servesAsThePodShould(t, objects, urls[0]!, issuer);
    if (postgres) {
      const token = await clientToken(urls[0]!, issuer);
      const roles = await Promise.all(
        urls.map(async (u) => (await json(await fetch(`${u}/meta/snapshots`, { headers: { authorization: `Bearer ${token}` } }))).coordination?.role),
      );
      t.strictSame(roles.sort(), ['follower', 'leader'], 'coordinated through the database Secret');
      t.equal((await fetch(`${urls[1]}/ready`)).status, 200, 'the second replica is ready too');
    }

    for (const pod of pods) {
      const mirror = pod.localPath('/var/cache/vexil/git');
      t.ok(existsSync(mirror) && readdirSync(mirror).some((f) => f.endsWith('.git')), 'the Git mirror is on the cache volume');
      t.equal(existsSync(pod.localPath('/data/auth.db')), !postgres, postgres ? 'no SQLite file with PostgreSQL' : 'the SQLite token store is on the data volume');
    }
    for (const stop of stops) t.equal(await stop(), 0, 'SIGTERM: a clean shutdown');
  });
}

async function clientToken(url: string, issuer: Awaited<ReturnType<typeof startJwtIssuer>>): Promise<string> {
  const token = await issuer.signServiceAccount({ now: Math.floor(Date.now() / 1000), namespace: 'apps', name: 'checkout', audience: 'vexil' });
  const res = await fetch(`${url}/auth/v1/method/cluster/serviceaccount`, { method: 'POST', body: JSON.stringify({ service_account_token: token }) });
  const body = await json(res);
  if (res.status !== 200) throw new Error(`token exchange answered ${res.status}: ${JSON.stringify(body)}`);
  return body.clientToken as string;
}

async function servesAsThePodShould(t: Test, objects: ReturnType<typeof render>, url: string, issuer: Awaited<ReturnType<typeof startJwtIssuer>>) {
  const { container } = vexilContainer(objects);
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    const res = await fetch(`${url}${container[probe].httpGet.path as string}`);
    t.equal(res.status, 200, `${probe} ${container[probe].httpGet.path} answers 200: ${JSON.stringify(await json(res))}`);
  }

  const evaluation = { namespaceKey: 'default', flagKey: 'greeting', entityId: 'user-1', context: {} };
  const refused = await fetch(`${url}/evaluate/v1/variant`, { method: 'POST', body: JSON.stringify(evaluation) });
  t.equal(refused.status, 401, 'authentication is required');
  await refused.arrayBuffer();

  const token = await clientToken(url, issuer);
  t.ok(issuer.stats.discoveryHits >= 1, 'vexil reached discovery with the projected token');
  const res = await fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify(evaluation),
  });
  const body = await json(res);
  t.equal(res.status, 200, JSON.stringify(body));
  t.equal(body.variantKey, 'hello', 'evaluated from the Git state');

  const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
  const hook = await fetch(`${url}/hooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'ping',
      'x-github-delivery': 'd-1',
      'x-hub-signature-256': `sha256=${createHmac('sha256', webhookSecret).update(ping).digest('hex')}`,
    },
    body: ping,
  });
  t.equal(hook.status, 200, `a ping signed with the webhook Secret: ${await hook.text()}`);
}

t.test('the root filesystem is read-only for the pod: with the cache volume read-only, the start fails', async (t) => {
  const why = gitUnavailableReason() ?? isolationUnavailableReason();
  if (why !== undefined) {
    reportMissing(t, 'git and the read-only root filesystem', why);
    if (!isCI()) return;
  }
  const objects = render('base');
  const { container } = vexilContainer(objects);
  (container.volumeMounts as Tree[]).find((m) => m.name === 'cache')!.readOnly = true;
  const git = await startGitFixture(t, { user: `${gitUser}:${gitPassword}` });
  await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const pod = preparePod(objects, { secrets: TEST_FILES.secrets, serviceAccountToken: TEST_FILES.serviceAccountToken, clusterCaPem: TEST_FILES.clusterCaPem });
  t.teardown(() => pod.remove());
  await t.rejects(
    startPodProcess(t, pod, { VEXIL_STORAGE_GIT_REPOSITORY: git.url, VEXIL_SERVER_HOST: '127.0.0.1', VEXIL_SERVER_HTTP_PORT: '0' }),
    // Node's recursive mkdir reports a read-only parent as ENOENT (the folder volumes/cache exists).
    /exited 1 before listening: vexil: cannot load the state .*(EROFS: read-only file system|ENOENT: no such file or directory), mkdir '[^']*\/volumes\/cache\/git'/,
  );
});

t.test('a slow first clone: nothing listens until it is done, so only the startup probe may judge the pod then', async (t) => {
  const why = gitUnavailableReason();
  if (why !== undefined) {
    reportMissing(t, 'git', why);
    if (!isCI()) return;
  }
  const objects = render('overlays/single-sqlite');
  const { container } = vexilContainer(objects);
  const git = await startGitFixture(t, { user: `${gitUser}:${gitPassword}` });
  await git.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  let release = () => {};
  const held = new Promise<undefined>((r) => (release = () => r(undefined)));
  t.teardown(() => release());
  git.server.setHook(() => held);
  const pod = preparePod(objects, { secrets: TEST_FILES.secrets, serviceAccountToken: TEST_FILES.serviceAccountToken, clusterCaPem: TEST_FILES.clusterCaPem });
  t.teardown(() => pod.remove());
  const port = await freePort();
  const started = startPodProcess(t, pod, { VEXIL_STORAGE_GIT_REPOSITORY: git.url, VEXIL_SERVER_HOST: '127.0.0.1', VEXIL_SERVER_HTTP_PORT: String(port) });
  started.catch(() => undefined);
  const liveness = `http://127.0.0.1:${port}${container.livenessProbe.httpGet.path as string}`;
  let poll: NodeJS.Timeout | undefined;
  t.teardown(() => clearInterval(poll));
  const cloning = new Promise<void>((r) => (poll = setInterval(() => git.server.requests.length > 0 && r(), 50)));
  // vexil exiting (or listening) before it asks the Git server anything fails here instead of waiting.
  await Promise.race([cloning, started.then(() => Promise.reject(new Error('listening before the first clone')))]);
  clearInterval(poll);
  await t.rejects(fetch(liveness), 'while the first clone runs, the liveness path does not answer (it would fail the pod)');
  release();
  const pod1 = await started;
  t.equal((await fetch(liveness)).status, 200, 'once the clone is done it does');
  const startup = container.startupProbe as Tree;
  t.ok(startup.periodSeconds * startup.failureThreshold >= 300, `the startup probe allows ${startup.periodSeconds * startup.failureThreshold} s for the first clone`);
  t.equal(await pod1.stop(), 0, 'SIGTERM: a clean shutdown');
});
