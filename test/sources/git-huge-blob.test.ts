/**
 * A 2 GiB blob of zeros (2 MB compressed) committed to a real git repository served over smart
 * HTTP, against `vexil serve` in a child process. Before, the first fetch of a branch holding it
 * inflated it whole (isomorphic-git's pack indexing): gigabytes of memory, then a crash or an
 * internal error. Now: the pack is indexed as a stream, the file is refused from its object header
 * (file.too-large, located), the last good snapshot keeps serving, and the server's peak memory
 * (VmHWM) grows by far less than the blob.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { gitFixture, gitUnavailableReason, startGitFixture, type GitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { addZeroBlob, commitBlobs } from '../support/git-zero-blob.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const HUGE = 2 * 1024 ** 3;
/** Peak memory growth allowed while fetching and refusing the blob (it is 2048 MiB inflated). */
const MAX_GROWTH_MIB = 300;

/** Peak and current resident memory of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peak: kib('VmHWM') / 1024, now: kib('VmRSS') / 1024 };
}

async function serve(t: Teardown, g: GitFixture, name: string) {
  const dir = join(g.cacheDir, name);
  const config = `${dir}.yml`;
  writeFileSync(
    config,
    [
      'server: { host: 127.0.0.1, http_port: 0 }',
      'log: { level: info, encoding: json }',
      'storage:',
      '  type: git',
      '  git:',
      `    repository: ${g.url}`,
      `    cache_dir: ${dir}`,
      '    poll_interval: 1s',
      '',
    ].join('\n'),
  );
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { child, listening } = await serveCli(t, ['serve', '--config', config]);
  return { pid: child.pid!, url: String(listening.url) };
}

const variant = (url: string, reference?: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {}, ...(reference ? { reference } : {}) }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

async function snapshots(url: string): Promise<any[]> {
  return ((await fetch(`${url}/meta/snapshots`).then((r) => r.json())) as any).references;
}

const noProc = existsProc() ? false : 'needs /proc (Linux) to read the server process memory';

t.test('a 2 GiB zero blob in a real repository: refused from its header, last good kept, memory bounded', { timeout: 280_000, skip: noProc }, async (t) => {
  const g = await startGitFixture(t);
  const good = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const zeros = await addZeroBlob(g.repo.gitdir, HUGE);
  await g.repo.branch('huge', good);
  await commitBlobs(g.repo.gitdir, 'huge', { 'huge.features.yml': zeros }, 'add a 2 GiB state file');

  t.test('on a branch: a request for it is refused, the default branch keeps serving', async (t) => {
    const s = await serve(t, g, 'branch');
    t.equal((await variant(s.url)).body.variantKey, 'hello');
    const before = memoryOf(s.pid);

    const refused = await variant(s.url, 'huge');
    t.equal(refused.status, 400, 'an invalid revision is FailedPrecondition');
    t.equal(refused.body.code, 9);
    t.match(refused.body.message, /huge\.features\.yml.*2147483648 bytes, over the limit of 8388608 bytes/);
    const main = await variant(s.url);
    t.equal(main.status, 200);
    t.equal(main.body.variantKey, 'hello', 'the default branch keeps serving');

    const huge = (await snapshots(s.url)).find((r) => r.reference === 'huge');
    t.match(huge?.lastRejected?.problems, [{ rule: 'file.too-large', file: 'huge.features.yml', severity: 'error' }]);
    const after = memoryOf(s.pid);
    t.comment(`branch: peak RSS ${before.peak.toFixed(0)} -> ${after.peak.toFixed(0)} MiB (RSS now ${after.now.toFixed(0)} MiB)`);
    t.ok(after.peak - before.peak < MAX_GROWTH_MIB, `peak memory grew by ${(after.peak - before.peak).toFixed(0)} MiB, under ${MAX_GROWTH_MIB}`);
  });

  t.test('pushed to the default branch after a good start: last good kept, located problem in /meta/snapshots', async (t) => {
    await g.repo.branch('main', good);
    const s = await serve(t, g, 'main');
    t.equal((await variant(s.url)).body.variantKey, 'hello');
    const before = memoryOf(s.pid);

    await g.repo.branch('main', 'huge');
    let main: any;
    for (let i = 0; i < 600 && main?.lastRejected === undefined; i++) {
      await new Promise((r) => setTimeout(r, 200));
      main = (await snapshots(s.url)).find((r) => r.reference === 'main');
    }
    t.match(main?.lastRejected?.problems, [{ rule: 'file.too-large', file: 'huge.features.yml', message: /2147483648 bytes/ }]);
    t.equal(main?.revision?.id, good, 'the last good commit is still the one served');
    const served = await variant(s.url);
    t.equal(served.status, 200);
    t.equal(served.body.variantKey, 'hello');
    const after = memoryOf(s.pid);
    t.comment(`default branch: peak RSS ${before.peak.toFixed(0)} -> ${after.peak.toFixed(0)} MiB (RSS now ${after.now.toFixed(0)} MiB)`);
    t.ok(after.peak - before.peak < MAX_GROWTH_MIB, `peak memory grew by ${(after.peak - before.peak).toFixed(0)} MiB, under ${MAX_GROWTH_MIB}`);
  });
});

function existsProc(): boolean {
  try {
    readFileSync('/proc/self/status');
    return true;
  } catch {
    return false;
  }
}
