/**
 * `GET /api/v1/namespaces/{ns}/outline` and `GET /api/v1/namespaces/{ns}/segments/{key}/usage`
 * through a real `vexil serve` on a real Git repository served over HTTP: every flag's rules and
 * rollouts as ranks, segment keys, percentages and values; the segments that match everyone; the
 * flags using one segment with the ranks that name it; the reference's state (feature differs);
 * gzip on a large answer; 404s as JSON; namespace-scoped tokens.
 */
import { gunzipSync } from 'node:zlib';
import { request } from 'node:http';
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
const BOOTSTRAP = 'outline-test-bootstrap-token';

async function get(url: string, token: string | null = BOOTSTRAP): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, { headers: token !== null ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The bytes on the wire for a gzip-accepting client, and the header saying how they are encoded. */
function wire(url: string, token: string): Promise<{ bytes: Buffer; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ bytes: Buffer.concat(parts), encoding: res.headers['content-encoding'] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `n` boolean flags each with a rollout on segment `staff` and a threshold (the bench's shape, smaller). */
function manyFlags(n: number): string {
  const lines = ['version: "1.4"', 'namespace: big', 'flags:'];
  for (let i = 1; i <= n; i++) {
    lines.push(`  - key: flag-${String(i).padStart(4, '0')}`, `    name: Flag ${i}`, '    type: BOOLEAN_FLAG_TYPE', '    enabled: false', '    rollouts:');
    lines.push('      - segment: {key: staff, value: true}', '      - threshold: {percentage: 25, value: true}');
  }
  lines.push('segments:', '  - key: staff', '    name: Staff', '    match_type: ALL_MATCH_TYPE', '    constraints:', '      - {type: STRING_COMPARISON_TYPE, property: team, operator: eq, value: staff}');
  return `${lines.join('\n')}\n`;
}

t.test('the outline of a namespace and the usage of a segment', async (t) => {
  const g = await startGitFixture(t);
  const main = await g.repo.commit('main', { 'default.features.yml': fixture('default.features.yml'), 'big.features.yml': manyFlags(600) });
  const changed = fixture('default.features.yml').replace('- segment: {key: beta, value: true}', '- segment: {key: eu, value: true}');
  t.not(changed, fixture('default.features.yml'));
  await g.repo.commit('feature', { 'default.features.yml': changed }, { parent: main });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-outline-'));
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

  let r = await get(`${url}/api/v1/namespaces/default/outline?reference=main`);
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.equal(r.body.reference, 'main');
  t.equal(r.body.revision, main);
  t.equal(r.body.namespaceKey, 'default');
  t.same(r.body.everyoneSegments, ['everyone'], 'the segment without constraints');
  t.same(r.body.flags, [
    { key: 'dark-mode', rules: [], rollouts: [{ rank: 1, value: true, segments: ['beta'], operator: 'OR' }, { rank: 2, value: true, percentage: 25 }] },
    { key: 'new-checkout', rules: [], rollouts: [] },
    {
      key: 'payment-provider',
      rules: [
        { rank: 1, segments: ['eu'], operator: 'OR' },
        { rank: 2, segments: ['everyone'], operator: 'OR' },
      ],
      rollouts: [],
    },
  ]);

  r = await get(`${url}/api/v1/namespaces/default/outline?flags=payment-provider+dark-mode+nope`);
  t.equal(r.status, 200);
  t.same(r.body.flags.map((f: { key: string }) => f.key), ['dark-mode', 'payment-provider'], 'the flags named, in key order; an unknown key left out');
  t.same(r.body.everyoneSegments, ['everyone']);
  r = await get(`${url}/api/v1/namespaces/default/outline?flags=${'x'.repeat(1025)}`);
  t.equal(r.status, 400);
  t.equal(r.body.code, 3);
  r = await get(`${url}/api/v1/namespaces/default/outline?flags=${Array.from({ length: 201 }, (_, i) => `f${i}`).join('+')}`);
  t.equal(r.status, 400);
  t.match(r.body.message, /at most 200 keys/);

  r = await get(`${url}/api/v1/namespaces/default/segments/beta/usage?reference=main`);
  t.equal(r.status, 200);
  t.same(r.body, { reference: 'main', revision: main, segmentKey: 'beta', flags: [{ key: 'dark-mode', name: 'Dark mode', rules: [], rollouts: [1] }], totalCount: 1 });
  r = await get(`${url}/api/v1/namespaces/default/segments/eu/usage?reference=feature`);
  t.same(
    r.body.flags,
    [
      { key: 'dark-mode', name: 'Dark mode', rules: [], rollouts: [1] },
      { key: 'payment-provider', name: 'Payment provider', rules: [1], rollouts: [] },
    ],
    'the feature branch moves the rollout to eu',
  );
  r = await get(`${url}/api/v1/namespaces/default/segments/everyone/usage`);
  t.equal(r.body.reference, 'main', 'the default reference when none is named');
  t.same(r.body.flags, [{ key: 'payment-provider', name: 'Payment provider', rules: [2], rollouts: [] }]);

  // 404s as JSON.
  r = await get(`${url}/api/v1/namespaces/nope/outline`);
  t.equal(r.status, 404);
  t.match(r.body, { code: 5, message: 'namespace "nope" not found' });
  r = await get(`${url}/api/v1/namespaces/default/segments/nope/usage`);
  t.equal(r.status, 404);
  t.match(r.body, { code: 5, message: 'segment "default/nope" not found' });
  r = await get(`${url}/api/v1/namespaces/default/outline?reference=no-such-branch`);
  t.equal(r.status, 404);

  // A large answer goes gzipped.
  const big = await wire(`${url}/api/v1/namespaces/big/segments/staff/usage`, BOOTSTRAP);
  t.equal(big.encoding, 'gzip');
  const body = JSON.parse(gunzipSync(big.bytes).toString('utf8')) as { totalCount: number; flags: unknown[] };
  t.equal(body.totalCount, 600);
  t.ok(big.bytes.length < 8000, `600 uses in ${big.bytes.length} bytes on the wire`);

  // Authentication, and a token scoped to another namespace.
  r = await get(`${url}/api/v1/namespaces/default/outline`, null);
  t.equal(r.status, 401);
  const scoped = (await createToken(url, BOOTSTRAP, { name: 'big only', namespaceKey: 'big' })).clientToken;
  r = await get(`${url}/api/v1/namespaces/big/outline`, scoped);
  t.equal(r.status, 200);
  r = await get(`${url}/api/v1/namespaces/default/segments/beta/usage`, scoped);
  t.equal(r.status, 403);
});
