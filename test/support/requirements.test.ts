/** The guards of the tests that need an outside program: what counts as CI, and skipping outside it. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { isCI, skipUnlessCI, testsNeeding } from './requirements.js';

t.test('isCI: any truthy CI counts, an empty or false one does not', async (t) => {
  for (const value of ['1', 'true', 'TRUE', 'yes', 'on', ' true ', 'github-actions']) t.ok(isCI({ CI: value }), `CI=${JSON.stringify(value)} is CI`);
  for (const value of ['', ' ', '0', 'false', 'False', 'no', 'off']) t.notOk(isCI({ CI: value }), `CI=${JSON.stringify(value)} is not CI`);
  t.notOk(isCI({}), 'unset is not CI');
});

t.test('skipUnlessCI: the reason outside CI, false under CI or when nothing is missing', async (t) => {
  t.equal(skipUnlessCI('git not found', {}), 'git not found');
  t.equal(skipUnlessCI('git not found', { CI: '1' }), false, 'under CI the test runs (and fails)');
  t.equal(skipUnlessCI(undefined, {}), false);
  t.equal(skipUnlessCI(undefined, { CI: 'true' }), false);
});

/** Runs the fixture file in a child process (so its skips are not counted in this run's summary). */
function runFixture(ci: string): { status: number | null; out: string } {
  const fixture = fileURLToPath(new URL('./requirements-skip.fixture.ts', import.meta.url));
  const env: NodeJS.ProcessEnv = { ...process.env, CI: ci };
  delete env.TAP; // a child run as a plain TAP producer, not as a subtest of this run
  const r = spawnSync(process.execPath, ['--import', 'tsx', fixture], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

t.test('testsNeeding: outside CI, every test declared on it is skipped with the reason', async (t) => {
  const outside = runFixture('');
  t.equal(outside.status, 0, 'the file passes');
  t.equal(outside.out.match(/# SKIP thing tests skipped: thing not found \(install it\)/g)?.length, 3, 'three tests skipped with the reason');
  t.match(outside.out, /# bodies run: 0/, 'no test body ran');
  const inside = runFixture('true');
  t.not(inside.status, 0, 'under CI a missing requirement fails the file');
  t.match(inside.out, /thing/);
});

t.test('testsNeeding: with the requirement met, the root itself', async (t) => {
  t.equal(testsNeeding(t, 'thing', undefined), t, 'the root itself');
  let ran = 0;
  await testsNeeding(t, 'thing', undefined).test('runs', async () => void ran++);
  t.equal(ran, 1);
});
