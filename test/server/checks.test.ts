/**
 * `GET /api/v1/checks` and `GET /api/v1/namespaces/{namespace}/checks` through a real `vexil serve`
 * on a real Git repository served over HTTP (test support's git server): the semantic checks of the
 * state each reference serves (main trips seven in namespace growth and one in default; feature
 * fixes one of them), located like `vexil validate` locates them and saying which flag or segment
 * they concern; the flag filter (the flag's own checks and those of the segments it uses); paging;
 * kept per snapshot; 400s and 404s as JSON; management auth with namespace scoping.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { REPO, serveCli } from '../cli/run-cli.js';
import { createToken } from '../auth/support.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());
const fixture = (p: string) => readFileSync(join(REPO, 'test/ui/fixtures/main', p), 'utf8');
const BOOTSTRAP = 'checks-test-bootstrap-token';

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function get(url: string, token?: string): Promise<Answer> {
  const res = await fetch(url, { headers: token !== undefined ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

t.test('the checks of the state a reference serves, by namespace and flag', async (t) => {
  const g = await startGitFixture(t);
  const growth = fixture('growth.features.yml');
  const main = await g.repo.commit('main', { 'default.features.yml': fixture('default.features.yml'), 'growth.features.yml': growth });
  // feature: rule 1 of `colors` gets its missing 20 % (rule.distributions.incomplete goes).
  const fixed = growth.replace('{variant: blue, rollout: 30}', '{variant: blue, rollout: 50}');
  t.not(fixed, growth);
  const feature = await g.repo.commit('feature', { 'growth.features.yml': fixed }, { parent: main });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-checks-api-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'vexil.yml');
  writeFileSync(
    config,
    [
      'server: { host: 127.0.0.1, http_port: 0 }',
      'log: { level: info, encoding: json }',
      `data_dir: ${join(dir, 'data')}`,
      'authentication:',
      '  required: true',
      '  methods:',
      '    token:',
      '      enabled: true',
      `      bootstrap: { token: ${BOOTSTRAP} }`,
      'storage:',
      '  type: git',
      '  git:',
      `    repository: ${g.url}`,
      `    cache_dir: ${join(dir, 'cache')}`,
      '    poll_interval: 1h',
      '',
    ].join('\n'),
  );
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);
  const api = (path: string, token: string | null = BOOTSTRAP) => get(`${url}${path}`, token ?? undefined);

  // The flag page's read: the flag's own checks and those of the segment its rollout uses.
  let r = await api('/api/v1/namespaces/growth/checks?reference=main&flag=beta-access');
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.equal(r.body.reference, 'main');
  t.equal(r.body.revision, main);
  t.ok(!Number.isNaN(Date.parse(r.body.checkedAt)), 'checkedAt is a time');
  t.equal(r.body.totalCount, 4);
  t.equal(r.body.nextPageToken, '');
  t.same(
    r.body.checks.map((c: any) => [c.rule, c.severity, `${c.file}:${c.line}:${c.column}`, c.namespaceKey, c.flagKey, c.segmentKey]),
    [
      ['flag.rollouts.no-effect', 'warning', 'growth.features.yml:15:5', 'growth', 'beta-access', ''],
      ['rollout.unreachable', 'warning', 'growth.features.yml:16:9', 'growth', 'beta-access', ''],
      ['flag.expired', 'warning', 'growth.features.yml:20:7', 'growth', 'beta-access', ''],
      ['segment.unmatchable', 'warning', 'growth.features.yml:60:9', 'growth', '', 'beta-users'],
    ],
    'located as vexil validate locates them',
  );
  const expired = r.body.checks.find((c: any) => c.rule === 'flag.expired');
  t.match(expired.message, /temporary flag `beta-access` \(owner @growth-team\) expired on 2026-01-31/);
  t.match(expired.hint, /remove the flag/);
  t.same(Object.keys(expired).sort(), ['column', 'file', 'flagKey', 'hint', 'line', 'message', 'namespaceKey', 'rule', 'segmentKey', 'severity']);

  // Kept with the snapshot: a second ask answers from the same computation.
  const again = await api('/api/v1/namespaces/growth/checks?reference=main&flag=beta-access');
  t.equal(again.body.checkedAt, r.body.checkedAt, 'computed once per snapshot');

  // A flag none concerns: an empty list, every field present.
  r = await api('/api/v1/namespaces/growth/checks?reference=main&flag=onboarding-tour');
  t.same(r.body.checks, []);
  t.equal(r.body.totalCount, 0);

  // The whole state, and one segment.
  r = await api('/api/v1/checks?reference=main');
  t.equal(r.status, 200);
  t.same(
    r.body.checks.map((c: any) => `${c.namespaceKey}/${c.flagKey || c.segmentKey} ${c.rule}`),
    [
      'default/dark-mode flag.rollouts.no-effect',
      'growth/beta-access flag.rollouts.no-effect',
      'growth/beta-access rollout.unreachable',
      'growth/beta-access flag.expired',
      'growth/colors variant.unserved',
      'growth/colors rule.distributions.incomplete',
      'growth/colors rule.unreachable',
      'growth/beta-users segment.unmatchable',
    ],
  );
  r = await api('/api/v1/checks?reference=main&namespace=growth&segment=beta-users');
  t.same(r.body.checks.map((c: any) => c.rule), ['segment.unmatchable']);
  r = await api('/api/v1/namespaces/growth/checks?reference=main&limit=3');
  t.equal(r.body.checks.length, 3);
  t.equal(r.body.totalCount, 7);
  t.equal(r.body.nextPageToken, '3');
  r = await api('/api/v1/namespaces/growth/checks?reference=main&limit=3&pageToken=6');
  t.same(r.body.checks.map((c: any) => c.rule), ['segment.unmatchable']);

  // Another reference: the state it serves, not main's.
  r = await api('/api/v1/namespaces/growth/checks?reference=feature&flag=colors');
  t.equal(r.status, 200);
  t.equal(r.body.revision, feature);
  t.same(r.body.checks.map((c: any) => c.rule), ['variant.unserved', 'rule.unreachable', 'segment.unmatchable'], 'rule 2 uses beta-users');
  r = await api('/api/v1/namespaces/growth/checks?flag=colors');
  t.equal(r.body.reference, 'main', 'no reference: the default one');
  t.same(r.body.checks.map((c: any) => c.rule), ['variant.unserved', 'rule.distributions.incomplete', 'rule.unreachable', 'segment.unmatchable']);

  // Bad input: 4xx with the JSON error body.
  const refused = async (path: string, status: number, message: RegExp) => {
    const a = await api(path);
    const name = path.length > 80 ? `${path.slice(0, 80)}…` : path;
    t.equal(a.status, status, name);
    t.match(a.body, { code: Number, message, details: [] }, name);
  };
  await refused('/api/v1/checks?flag=beta-access', 400, /flag and segment need a namespace/);
  await refused('/api/v1/namespaces/growth/checks?limit=x', 400, /limit/);
  await refused('/api/v1/namespaces/growth/checks?pageToken=3', 400, /limit must be set/);
  await refused(`/api/v1/namespaces/growth/checks?flag=${'x'.repeat(2000)}`, 400, /flag must be at most 1024 characters/);
  await refused('/api/v1/namespaces/growth/checks?flag=nope', 404, /flag "growth\/nope" not found/);
  await refused('/api/v1/namespaces/growth/checks?segment=nope', 404, /segment "growth\/nope" not found/);
  await refused('/api/v1/namespaces/nope/checks', 404, /namespace "nope" not found/);
  await refused('/api/v1/checks?namespace=nope', 404, /namespace "nope" not found/);
  await refused('/api/v1/checks?reference=no-such-branch', 404, /reference "no-such-branch" not found/);

  // Management auth: a token is needed; a namespace-scoped token reads its namespace only.
  t.equal((await api('/api/v1/checks', null)).status, 401);
  t.equal((await api('/api/v1/namespaces/growth/checks', null)).status, 401);
  const scoped = (await createToken(url, BOOTSTRAP, { name: 'growth-only', namespaceKey: 'growth' })).clientToken;
  t.equal((await api('/api/v1/namespaces/growth/checks?flag=colors', scoped)).status, 200);
  t.equal((await api('/api/v1/namespaces/default/checks', scoped)).status, 403);
  t.equal((await api('/api/v1/checks?namespace=growth', scoped)).status, 403, 'the form spanning namespaces needs an unscoped token');
});
