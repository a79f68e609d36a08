/** The guards of the tests that need an outside program: what counts as CI, and skipping outside it. */
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

t.test('testsNeeding: outside CI, every test declared on it is skipped with the reason', async (t) => {
  const saved = process.env.CI;
  delete process.env.CI;
  t.teardown(() => {
    if (saved !== undefined) process.env.CI = saved;
  });
  await t.test('a file whose requirement is missing', async (file) => {
    const root = testsNeeding(file, 'thing', 'thing not found (install it)');
    let ran = 0;
    await root.test('with a name', async () => void ran++);
    await root.test('with options', { timeout: 1000 }, async () => void ran++);
    await root.test(async () => void ran++);
    t.equal(ran, 0, 'no test body ran');
    root.pass('any other member is the root\'s own (here an assertion on it)');
  });
  await t.test('a file whose requirement is met', async (file) => {
    t.equal(testsNeeding(file, 'thing', undefined), file, 'the root itself');
    let ran = 0;
    await testsNeeding(file, 'thing', undefined).test('runs', async () => void ran++);
    t.equal(ran, 1);
  });
});
