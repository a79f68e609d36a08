/**
 * storage.max_state_size on the local backend, through `vexil serve`: state files adding up to
 * more than the limit are refused with a problem located on the file that crossed it: at start
 * (exit 1, the problem printed), and after a good start (last good kept, /meta/snapshots).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { serveCli, spawnCli } from '../cli/run-cli.js';
import { gitFixture } from '../support/git-fixture.js';

function stateDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-state-size-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'features.yml'), gitFixture('hello.yml'));
  return dir;
}

/** A valid state file of about `bytes` bytes (a flag file padded with a comment). */
const padded = (bytes: number) => `${gitFixture('bonjour.yml').replace('namespace: default', 'namespace: other')}\n# ${'x'.repeat(bytes)}\n`;

const env = (dir: string) => ({
  VEXIL_SERVER_HTTP_PORT: '0',
  VEXIL_STORAGE_TYPE: 'local',
  VEXIL_STORAGE_LOCAL_PATH: dir,
  VEXIL_STORAGE_MAX_STATE_SIZE: '2048',
});

t.test('over the limit at start: vexil serve exits 1 naming the file that crossed it', { timeout: 60_000 }, async (t) => {
  const dir = stateDir(t);
  writeFileSync(join(dir, 'more.features.yml'), padded(2000));
  const child = spawnCli(['serve'], { env: env(dir) });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL'); // it started: the test has failed already
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.equal(code, 1);
  t.match(stderr, /more\.features\.yml.*add up to more than 2048 bytes/);
});

t.test('over the limit after a good start: last good kept, the problem located in /meta/snapshots', async (t) => {
  const dir = stateDir(t);
  const { listening } = await serveCli(t, ['serve'], { env: env(dir) });
  const url = String(listening.url);
  const flag = () => fetch(`${url}/api/v1/namespaces/default/flags/greeting`).then((r) => r.status);
  t.equal(await flag(), 200);

  writeFileSync(join(dir, 'more.features.yml'), padded(2000));
  let ref: any;
  for (let i = 0; i < 100 && ref?.lastRejected === undefined; i++) {
    await new Promise((r) => setTimeout(r, 100));
    ref = ((await fetch(`${url}/meta/snapshots`).then((r) => r.json())) as any).references[0];
  }
  t.match(ref?.lastRejected?.problems, [
    { severity: 'error', rule: 'state.too-large', file: 'more.features.yml', message: /add up to more than 2048 bytes: more\.features\.yml \(\d+ bytes\) brings them to \d+ bytes/ },
  ]);
  t.equal(await flag(), 200, 'the last good state keeps serving');
  const other = await fetch(`${url}/api/v1/namespaces/other/flags/greeting`).then((r) => r.status);
  t.equal(other, 404, 'the refused file was not loaded');
});
