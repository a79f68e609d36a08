/**
 * `GET /api/v1/diff` through a real `vexil serve` on a real Git repository served over HTTP
 * (test support's git server): two branches (a rollout moved 50 → 60, a flag added, a constraint
 * added), a commit id as a reference, the impact preview, the namespace filter, the 400s naming
 * bad parameters, 404 for an unknown reference, the schema, and the management auth rules
 * (no token: 401; namespace-scoped token: 403; unscoped token: 200). Then the impact's sample: the
 * head revision's flag test contexts (broken and oversized test files skipped, the state still
 * served), the same figures as `vexil diff --repo` on the same repository.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import tap from 'tap';
import { REPO, runCli, serveCli } from '../cli/run-cli.js';
import { createToken } from '../auth/support.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());
const validate = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(join(REPO, 'schemas/diff.schema.json'), 'utf8')) as object);
const fixture = (p: string) => readFileSync(join(REPO, 'fixtures/diff', p), 'utf8');
const BOOTSTRAP = 'diff-test-bootstrap-token';

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function get(url: string, token?: string): Promise<Answer> {
  const res = await fetch(url, { headers: token !== undefined ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

t.test('GET /api/v1/diff between two branches of a Git repository', async (t) => {
  const g = await startGitFixture(t);
  const baseCommit = await g.repo.commit('main', { 'features.yml': fixture('base/features.yml') });
  const headCommit = await g.repo.commit('feature', { 'features.yml': fixture('head/features.yml') }, { parent: baseCommit });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-diff-api-'));
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
  const api = (query: string, token: string | null = BOOTSTRAP) => get(`${url}/api/v1/diff?${query}`, token ?? undefined);

  const r = await api('base=main&head=feature');
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.ok(validate(r.body), JSON.stringify(validate.errors));
  t.same(r.body.base, { reference: 'main', revision: baseCommit });
  t.same(r.body.head, { reference: 'feature', revision: headCommit });
  t.notOk('impact' in r.body, 'no impact unless asked');
  const flags = r.body.namespaces[0].flags as { key: string; status: string; changes: Record<string, unknown>[] }[];
  t.same(flags.map((f) => [f.key, f.status]), [['dark-mode', 'changed'], ['new-checkout', 'added'], ['old-banner', 'removed'], ['payment-provider', 'changed']]);
  t.same(
    flags.find((f) => f.key === 'payment-provider')!.changes.filter((c) => c.kind === 'distribution'),
    [
      { kind: 'distribution', action: 'changed', rule: { from: 2, to: 2 }, variant: 'adyen', from: 50, to: 60 },
      { kind: 'distribution', action: 'changed', rule: { from: 2, to: 2 }, variant: 'stripe', from: 50, to: 40 },
    ],
  );
  t.same(r.body.namespaces[0].segments.map((s: { key: string }) => s.key), ['eu']);

  // A commit id is a reference too; the impact preview over N synthetic entities.
  const withImpact = await api(`base=${baseCommit}&head=feature&impact=2000`);
  t.equal(withImpact.status, 200, JSON.stringify(withImpact.body));
  t.ok(validate(withImpact.body), JSON.stringify(validate.errors));
  t.equal(withImpact.body.base.reference, baseCommit);
  t.same(withImpact.body.impact.sample, { source: 'synthetic', entities: 2000, contexts: 0 });
  const pay = withImpact.body.impact.flags.find((f: { flag: string }) => f.flag === 'payment-provider');
  t.equal(pay.evaluated, 2000);
  t.ok(pay.changed > 0 && pay.changed < 400, `about 10% move (${pay.changed})`);
  t.same(pay.transitions.map((x: { from: string; to: string }) => `${x.from}→${x.to}`), ['stripe→adyen']);

  const same = await api('base=main&head=main');
  t.equal(same.status, 200);
  t.equal(same.body.changed, false);
  const filtered = await api('base=main&head=feature&namespace=other');
  t.equal(filtered.body.changed, false);

  // Bad parameters: 400 naming them; an unknown reference: 404.
  for (const [query, message] of [
    ['head=feature', /^base must be a reference/],
    ['base=main', /^head must be a reference/],
    ['base=main&head=feature&impact=100001', /^impact must be an integer from 0 to 100000/],
    ['base=main&head=feature&impact=-1', /^impact must be an integer/],
    [`base=main&head=feature&impact=${'9'.repeat(1_000)}`, /^impact must be an integer .*…"\)$/],
  ] as const) {
    const bad = await api(query);
    t.equal(bad.status, 400, query.slice(0, 60));
    t.equal(bad.body.code, 3);
    t.match(bad.body.message, message);
  }
  const unknown = await api('base=main&head=no-such-branch');
  t.equal(unknown.status, 404);
  t.match(unknown.body.message, /no-such-branch/);

  // Management auth rules: a token is needed; a namespace-scoped token is refused (the diff spans namespaces).
  t.equal((await get(`${url}/api/v1/namespaces`)).status, 401, 'management needs a token');
  t.equal((await api('base=main&head=feature', null)).status, 401);
  const scoped = (await createToken(url, BOOTSTRAP, { name: 'scoped', namespaceKey: 'default' })).clientToken;
  t.equal((await api('base=main&head=feature', scoped)).status, 403);
  const unscoped = (await createToken(url, BOOTSTRAP, { name: 'ci' })).clientToken;
  t.equal((await api('base=main&head=feature', unscoped)).status, 200);
});

/** A flag whose head adds a rule for `plan=enterprise`: only the contexts of a test file reach it. */
const PRICING = (withEnterpriseRule: boolean) => `version: "1.4"
namespace: default
flags:
  - key: pricing
    name: Pricing
    enabled: true
    variants: [{key: standard}, {key: premium}]
    rules:${withEnterpriseRule ? '\n      - segment: enterprise\n        distributions: [{variant: premium, rollout: 100}]' : ''}
      - segment: everyone
        distributions: [{variant: standard, rollout: 100}]
segments:
  - key: everyone
    name: Everyone
    match_type: ALL_MATCH_TYPE
  - key: enterprise
    name: Enterprise
    match_type: ALL_MATCH_TYPE
    constraints:
      - {type: STRING_COMPARISON_TYPE, property: plan, operator: eq, value: enterprise}
`;

const PRICING_TESTS = `tests:
  - name: enterprise customers get premium
    flag: pricing
    entity: acme
    context: {plan: enterprise}
    expect: {variant: premium}
  - name: free customers get standard
    flag: pricing
    entity: someone
    context: {plan: free}
    expect: {variant: standard}
  - name: the same context again counts once
    flag: pricing
    entity: acme-2
    context: {plan: enterprise}
    expect: {variant: premium}
`;

t.test('the API impact samples the head revision\'s flag test contexts, as `vexil diff --repo` does', async (t) => {
  const g = await startGitFixture(t);
  const baseCommit = await g.repo.commit('main', { 'features.yml': PRICING(false) });
  await g.repo.commit(
    'feature',
    {
      'features.yml': PRICING(true),
      'pricing.test.yml': PRICING_TESTS,
      // Broken test files do not reject the state; they add no context.
      'broken.test.yml': 'tests: [ {flag: pricing, context: {plan: "unclosed\n',
      'wrong-shape.test.yml': 'tests: {not: a list}\n',
      // ~1 MB: a context too large to keep (over 16 KiB), skipped whole.
      'huge.test.yml': `tests:\n  - {flag: pricing, entity: x, context: {plan: "${'x'.repeat(1_000_000)}"}, expect: {match: false}}\n`,
    },
    { parent: baseCommit },
  );
  const dir = mkdtempSync(join(tmpdir(), 'vexil-diff-api-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'vexil.yml');
  writeFileSync(
    config,
    ['server: { host: 127.0.0.1, http_port: 0 }', 'log: { level: info, encoding: json }', `data_dir: ${join(dir, 'data')}`, 'storage:', '  type: git', '  git:', `    repository: ${g.url}`, `    cache_dir: ${join(dir, 'cache')}`, '    poll_interval: 1h', ''].join('\n'),
  );
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);

  const r = await get(`${url}/api/v1/diff?base=main&head=feature&impact=1000`);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.ok(validate(r.body), JSON.stringify(validate.errors));
  t.same(r.body.impact.sample, { source: 'synthetic', entities: 1000, contexts: 2 }, 'the two distinct contexts of the test files');
  t.same(r.body.impact.flags, [
    { namespace: 'default', flag: 'pricing', evaluated: 1000, changed: 500, ratio: 0.5, transitions: [{ from: 'standard', to: 'premium', count: 500 }] },
  ], 'every entity given the plan=enterprise context moves');

  // The base has no test file: a diff the other way round samples the empty context, and nothing moves.
  const back = await get(`${url}/api/v1/diff?base=feature&head=main&impact=1000`);
  t.same(back.body.impact.sample, { source: 'synthetic', entities: 1000, contexts: 0 });
  t.same(back.body.impact.flags.map((f: { changed: number }) => f.changed), [0]);

  // `vexil diff --repo` on the same repository: the same sample, the same figures.
  const cli = await runCli(['diff', '--repo', g.repo.gitdir, 'main', 'feature', '--format', 'json', '--impact', '1000']);
  t.equal(cli.code, 0, cli.stderr);
  t.same((JSON.parse(cli.stdout) as { impact: unknown }).impact, r.body.impact);
});
