/**
 * `vexil evaluate`: the real CLI in a child process, against examples/ and fixtures. The JSON
 * output is compared with what the real HTTP server answers for the same request (same fields,
 * same order, same values apart from requestId/timestamp/duration; same error bodies).
 */
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { REPO, runCli } from './run-cli.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

const EXAMPLES = join(REPO, 'examples');
const VOLATILE = new Set(['requestId', 'requestDurationMillis', 'timestamp']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function stable(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k]) => !VOLATILE.has(k)));
}

t.test('text: the result, why, and the trace with each constraint and the bucket', async (t) => {
  const r = await runCli(['evaluate', '--flag', 'color-theme', '--entity', 'alice@example.com', '--dir', 'examples']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stderr, '');
  const lines = r.stdout.split('\n');
  t.equal(lines[0], 'default/color-theme (variant flag) for entity "alice@example.com"');
  t.equal(lines[1], 'result: variant dark, match, MATCH_EVALUATION_REASON, segments internal-users');
  t.equal(lines[2], 'attachment: {"background":"#111111","foreground":"#eeeeee"}');
  t.match(lines[3], /^why: rule 1 decided: segment internal-users matched, bucket \d+ is in dark \[0, 1000\)$/);
  t.ok(lines.includes('  rule 1: segment internal-users: matched, decides'));
  t.ok(lines.includes('        ✓ entity id ends with "@example.com"; got "alice@example.com"'), 'a matching constraint with the value compared');
  t.ok(lines.includes('        ✗ entity id is one of [qa-bot-1, qa-bot-2]; got "alice@example.com"'), 'a constraint that did not match');
  t.match(r.stdout, /^ {4}bucket \d+ of 0-999: dark \[0, 1000\) ✓$/m);
  t.ok(lines.includes('  rules 2-3: not evaluated'));
});

t.test('text: a boolean flag decided by its threshold after a missed segment; context shown', async (t) => {
  const r = await runCli(['evaluate', '--flag', 'new-search', '--entity', 'user-5', '--context', 'plan=pro', '-d', 'examples']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^default\/new-search \(boolean flag\) for entity "user-5"\ncontext: plan="pro"\nresult: enabled true, MATCH_EVALUATION_REASON, no segments\n/);
  t.match(r.stdout, /why: rollout 2 decided: threshold 25 %, bucket 17 < 25 → true/);
  t.match(r.stdout, /rollout 1: segment internal-users → true: not matched\n {4}✗ segment internal-users \(ANY\)/);
  t.match(r.stdout, /rollout 2: threshold 25 % → true: bucket 17 < 25: matched, decides/);
});

t.test('the working folder is the default --dir; --namespace and repeated --context', async (t) => {
  const r = await runCli(
    ['evaluate', '--flag', 'express-shipping', '-n', 'checkout', '--entity', 'u', '-c', 'cart_total=250', '-c', 'currency=EUR', '-c', 'country=DE', '-f', 'json'],
    { cwd: EXAMPLES },
  );
  t.equal(r.code, 0, r.stderr);
  const body = JSON.parse(r.stdout) as Record<string, unknown>;
  t.same(stable(body), { enabled: true, reason: 'MATCH_EVALUATION_REASON', flagKey: 'express-shipping', segmentKeys: ['big-spenders', 'eu-customers'] });
});

t.test('json: the variant and boolean bodies of the HTTP API, field for field', async (t) => {
  const config = loadConfig({ env: {}, cwd: EXAMPLES, defaultLocalPath: EXAMPLES });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: EXAMPLES }), debounceMs: 20 });
  t.teardown(() => store.close());
  await store.start();
  const server = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    storageType: 'local',
    version: { version: '0.0.0', commit: 'test' },
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => server.close());
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const cases: Array<{ args: string[]; path: string; body: Record<string, unknown> }> = [
    {
      args: ['--flag', 'color-theme', '--entity', 'user-1', '-c', 'beta_opt_in=true', '-c', 'plan=pro', '-c', 'platform=ios'],
      path: '/evaluate/v1/variant',
      body: { namespaceKey: 'default', flagKey: 'color-theme', entityId: 'user-1', context: { beta_opt_in: 'true', plan: 'pro', platform: 'ios' } },
    },
    {
      args: ['--flag', 'payment-provider', '-n', 'checkout', '--entity', 'user-4', '-c', 'country=US'],
      path: '/evaluate/v1/variant',
      body: { namespaceKey: 'checkout', flagKey: 'payment-provider', entityId: 'user-4', context: { country: 'US' } },
    },
    {
      args: ['--flag', 'legacy-dashboard', '--entity', 'x'],
      path: '/evaluate/v1/variant',
      body: { flagKey: 'legacy-dashboard', entityId: 'x' },
    },
    {
      args: ['--flag', 'new-search', '--entity', 'bob@example.com', '--reference', 'local'],
      path: '/evaluate/v1/boolean',
      body: { flagKey: 'new-search', entityId: 'bob@example.com', reference: 'local' },
    },
    {
      args: ['--flag', 'express-shipping', '-n', 'checkout', '--entity', 'user-19', '-c', 'item_count=1', '-c', 'cart_total=19.99'],
      path: '/evaluate/v1/boolean',
      body: { namespaceKey: 'checkout', flagKey: 'express-shipping', entityId: 'user-19', context: { item_count: '1', cart_total: '19.99' } },
    },
  ];
  for (const c of cases) {
    const [cli, http] = await Promise.all([runCli(['evaluate', '-f', 'json', '-d', 'examples', ...c.args]), api(c.path, c.body)]);
    t.equal(cli.code, 0, cli.stderr);
    t.equal(http.status, 200);
    t.ok(cli.stdout.endsWith('}\n') && !cli.stdout.slice(0, -1).includes('\n'), 'one compact JSON line, as the API writes it');
    const body = JSON.parse(cli.stdout) as Record<string, unknown>;
    t.same(Object.keys(body), Object.keys(http.body), `${c.args[1]}: same fields in the same order`);
    t.same(stable(body), stable(http.body), `${c.args[1]}: same values`);
    t.match(body.requestId, UUID);
    t.ok(typeof body.requestDurationMillis === 'number' && body.requestDurationMillis >= 0);
    t.ok(!Number.isNaN(Date.parse(body.timestamp as string)), 'an RFC 3339 timestamp');
  }

  // Errors: the same body as the API's.
  const errors: Array<{ args: string[]; body: Record<string, unknown>; message: string }> = [
    { args: ['--flag', 'nope', '--entity', 'u'], body: { flagKey: 'nope', entityId: 'u' }, message: 'flag "default/nope" not found' },
    { args: ['--flag', 'color-theme', '-n', 'nowhere', '--entity', 'u'], body: { namespaceKey: 'nowhere', flagKey: 'color-theme', entityId: 'u' }, message: 'namespace "nowhere" not found' },
    { args: ['--flag', 'color-theme', '-r', 'main', '--entity', 'u'], body: { flagKey: 'color-theme', entityId: 'u', reference: 'main' }, message: 'reference "main" not found' },
  ];
  for (const e of errors) {
    const [cli, http] = await Promise.all([runCli(['evaluate', '-f', 'json', '-d', 'examples', ...e.args]), api('/evaluate/v1/variant', e.body)]);
    t.equal(cli.code, 1, `${e.message}: exit 1`);
    t.equal(http.status, 404);
    t.same(JSON.parse(cli.stdout), http.body, `${e.message}: the API's error body`);
    t.same(JSON.parse(cli.stdout), { code: 5, message: e.message, details: [] });
    t.equal(cli.stdout, `${JSON.stringify(http.body)}\n`, 'byte for byte');

    const text = await runCli(['evaluate', '-d', 'examples', ...e.args]);
    t.equal(text.code, 1);
    t.equal(text.stdout, '');
    t.equal(text.stderr, `vexil: ${e.message}\n`, 'text: the message on stderr');
  }
});

t.test('an invalid state: located problems on stderr, exit 1', async (t) => {
  const r = await runCli(['evaluate', '--flag', 'dark-mode', '--entity', 'u', '--dir', 'fixtures/flag-tests/invalid-state']);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.match(r.stderr, /^vexil: the state in fixtures\/flag-tests\/invalid-state is invalid \(1 error, 0 warnings\)\n/);
  t.match(r.stderr, /fixtures\/flag-tests\/invalid-state\/features\.yml:9:16: error rollout\.segment\.unknown: /);
});

t.test('usage errors exit 2 with the evaluate usage', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--entity', 'u'], /missing --flag KEY/],
    [['--flag', 'f'], /missing --entity ID/],
    [['--flag', 'f', '--entity', 'u', '--context', 'novalue'], /--context "novalue" is not KEY=VALUE/],
    [['--flag', 'f', '--entity', 'u', '--context', '=v'], /--context "=v" is not KEY=VALUE/],
    [['--flag', 'f', '--entity', 'u', '--format', 'xml'], /unknown format "xml" \(expected text, json\)/],
    [['--flag', 'f', '--entity', 'u', '--dir', 'no/such/folder'], /no such folder: no\/such\/folder/],
    [['--flag', 'f', '--entity', 'u', 'extra'], /extra/],
    [['--flag', 'f', '--entity', 'u', '--bogus'], /--bogus/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(['evaluate', ...args])));
  for (const [i, [args, message]] of cases.entries()) {
    const r = results[i]!;
    t.equal(r.code, 2, `${args.join(' ')} exits 2`);
    t.match(r.stderr, message);
    t.match(r.stderr, /Usage: vexil evaluate --flag KEY --entity ID/);
    t.equal(r.stdout, '');
  }
});

t.test('help: evaluate --help, help evaluate, and the command list', async (t) => {
  for (const args of [['evaluate', '--help'], ['help', 'evaluate'], ['evaluate', '-h']]) {
    const r = await runCli(args);
    t.equal(r.code, 0);
    t.ok(r.stdout.startsWith('Usage: vexil evaluate --flag KEY --entity ID'), args.join(' '));
  }
  const main = await runCli(['--help']);
  t.match(main.stdout, /^ {2}evaluate {4}Evaluate a flag/m);
  t.match(main.stdout, /^ {2}test {8}Run flag test files/m);
});
