import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FileRefusedError } from '../../src/sources/file-refused.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../src/sources/local.js';
import type { FileSet, Source } from '../../src/sources/types.js';
import { STATE_LIMITS } from '../support/config-defaults.js';

function tempDir(t: { teardown(fn: () => void): void }, prefix = 'vexil-local-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function write(root: string, rel: string, text: string): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), text);
}

async function current(source: Source): Promise<FileSet> {
  const rev = (await source.refs()).get(LOCAL_REFERENCE);
  if (rev === undefined) throw new Error('no local ref');
  return source.files(rev);
}

const text = async (fs: FileSet, path: string) => {
  const f = fs.files.find((x) => x.path === path);
  if (f === undefined) throw new Error(`no ${path}`);
  return new TextDecoder().decode(await f.bytes());
};

t.test('lists every file under the root, sorted, skipping .git and node_modules', async (t) => {
  const root = tempDir(t);
  write(root, 'b.features.yml', 'flags: []\n');
  write(root, 'a/features.yml', 'segments: []\n');
  write(root, 'notes.txt', 'hello');
  write(root, '.vexil.yml', 'include: ["**"]\n');
  write(root, '.git/config', '[core]\n');
  write(root, 'node_modules/pkg/features.yml', 'flags: []\n');
  write(root, 'deep/node_modules/features.yml', 'flags: []\n');

  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  t.equal(source.kind, 'local');
  const refs = await source.refs();
  t.same([...refs.keys()], [LOCAL_REFERENCE], 'one reference, named local');
  const fs = await current(source);
  t.same(
    fs.files.map((f) => f.path),
    ['.vexil.yml', 'a/features.yml', 'b.features.yml', 'notes.txt'],
  );
  t.equal(await text(fs, 'a/features.yml'), 'segments: []\n');
  t.equal(await text(fs, 'notes.txt'), 'hello', 'non-state files are read on demand');
  t.equal(fs.files.find((f) => f.path === 'b.features.yml')?.size, 10);
  t.equal(fs.revision.ref, LOCAL_REFERENCE);
  t.match(fs.revision.id, /^[0-9a-f]{40}$/);
});

t.test('a missing folder or a file as root is an error', async (t) => {
  const root = tempDir(t);
  write(root, 'file.yml', 'x: 1\n');
  await t.rejects(createLocalSource({ ...STATE_LIMITS, path: join(root, 'nope') }).refs(), /does not exist/);
  await t.rejects(createLocalSource({ ...STATE_LIMITS, path: join(root, 'file.yml') }).refs(), /not a directory/);
});

t.test('files() refuses references other than local', async (t) => {
  const root = tempDir(t);
  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  await t.rejects(source.files({ id: 'x', ref: 'main' }), /reference "main" not found/);
});

t.test('a symlink leaving the root is listed but never read; one inside is followed', async (t) => {
  const outside = tempDir(t, 'vexil-outside-');
  write(outside, 'secret.features.yml', 'flags: [{key: stolen, name: Stolen}]\n');
  write(outside, 'dir/features.yml', 'flags: []\n');
  const root = tempDir(t);
  write(root, 'real/features.yml', 'flags: []\n');
  symlinkSync(join(outside, 'secret.features.yml'), join(root, 'escape.features.yml'));
  symlinkSync(join(outside, 'dir'), join(root, 'escaped-dir'));
  symlinkSync('real/features.yml', join(root, 'inside.features.yml'), 'file');
  mkdirSync(join(root, 'links'));
  symlinkSync('../real', join(root, 'links/real-again'));
  symlinkSync(join(root, 'missing.yml'), join(root, 'dangling.features.yml'));

  const fs = await current(createLocalSource({ ...STATE_LIMITS, path: root }));
  const paths = fs.files.map((f) => f.path);
  t.same(paths, [
    'dangling.features.yml',
    'escape.features.yml',
    'escaped-dir',
    'inside.features.yml',
    'links/real-again/features.yml',
    'real/features.yml',
  ]);
  t.notOk(paths.some((p) => p.startsWith('escaped-dir/')), 'an escaping folder link is not walked');

  const escape = fs.files.find((f) => f.path === 'escape.features.yml')!;
  const err = await escape.bytes().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof FileRefusedError, 'bytes() refuses');
  t.equal((err as FileRefusedError).rule, 'file.symlink-outside-root');
  t.notMatch((err as Error).message, /stolen/);

  const dangling = fs.files.find((f) => f.path === 'dangling.features.yml')!;
  await t.rejects(dangling.bytes(), { name: 'FileRefusedError', rule: 'file.unreadable' });

  t.equal(await text(fs, 'inside.features.yml'), 'flags: []\n');
  t.equal(await text(fs, 'links/real-again/features.yml'), 'flags: []\n');
});

t.test('a file over maxFileSize is not read and reports its size', async (t) => {
  const root = tempDir(t);
  write(root, 'big.features.yml', `# ${'x'.repeat(200)}\n`);
  write(root, 'big.bin', 'y'.repeat(300));
  write(root, 'small.features.yml', 'flags: []\n');
  const fs = await current(createLocalSource({ ...STATE_LIMITS, path: root, maxFileSize: 100 }));
  const big = fs.files.find((f) => f.path === 'big.features.yml')!;
  t.equal(big.size, 203);
  await t.rejects(big.bytes(), { name: 'FileRefusedError', rule: 'file.too-large', message: /203 bytes, over the limit of 100/ });
  await t.rejects(fs.files.find((f) => f.path === 'big.bin')!.bytes(), { name: 'FileRefusedError', rule: 'file.too-large' });
  t.equal(await text(fs, 'small.features.yml'), 'flags: []\n');
});

t.test('the revision is a content hash: changes with any file, stable otherwise', async (t) => {
  const root = tempDir(t);
  write(root, 'a.features.yml', 'flags: []\n');
  write(root, 'b/features.yml', 'segments: []\n');
  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  const rev = async () => (await source.refs()).get(LOCAL_REFERENCE)!.id;

  const r1 = await rev();
  t.equal(await rev(), r1, 'stable when nothing changed');
  const later = new Date(Date.now() + 5000);
  utimesSync(join(root, 'a.features.yml'), later, later);
  t.equal(await rev(), r1, 'touching a file does not change the revision');

  write(root, 'b/features.yml', 'segments: [] \n');
  const r2 = await rev();
  t.not(r2, r1, 'an edit changes it');
  write(root, 'c.features.yml', '');
  const r3 = await rev();
  t.not(r3, r2, 'a new file changes it');
  rmSync(join(root, 'c.features.yml'));
  t.equal(await rev(), r2, 'removing it again restores the revision');
  write(root, 'b/features.yml', 'segments: []\n');
  t.equal(await rev(), r1, 'same content, same revision');

  const fs = await source.files({ id: r1, ref: LOCAL_REFERENCE });
  t.equal(fs.revision.id, r1);
  t.equal(await text(fs, 'b/features.yml'), 'segments: []\n');
});

t.test('files() of a stale revision reads the folder again and says which revision it read', async (t) => {
  const root = tempDir(t);
  write(root, 'a.features.yml', 'one\n');
  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  const r1 = (await source.refs()).get(LOCAL_REFERENCE)!;
  write(root, 'a.features.yml', 'two\n');
  const other = createLocalSource({ ...STATE_LIMITS, path: root });
  const r2 = (await other.refs()).get(LOCAL_REFERENCE)!;
  const fs = await source.files({ id: 'stale', ref: LOCAL_REFERENCE });
  t.equal(fs.revision.id, r2.id);
  t.not(fs.revision.id, r1.id);
  t.equal(await text(fs, 'a.features.yml'), 'two\n');
});

t.test('watch() reports changes until unsubscribed', async (t) => {
  const root = tempDir(t);
  write(root, 'a.features.yml', 'flags: []\n');
  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  let calls = 0;
  let wake: (() => void) | undefined;
  const unwatch = source.watch!(() => {
    calls++;
    wake?.();
  });
  t.teardown(unwatch);
  const next = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });
  await next(); // the watcher is armed (it reports once when ready)
  const changed = next();
  write(root, 'a.features.yml', 'flags: [] # edited\n');
  await changed;
  t.ok(calls >= 2, 'an edit is reported');
  const quick = next();
  write(root, 'a.features.yml', 'flags: [] # edited again, within 50 ms\n');
  await quick;
  t.pass('a second save right after the first is reported too');
  const created = next();
  write(root, 'sub/features.yml', 'flags: []\n');
  await created;
  t.pass('a new file in a new folder is reported');
  await unwatch();
  const before = calls;
  write(root, 'a.features.yml', 'flags: [] # after\n');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(calls, before, 'nothing after unsubscribing');
});

t.test('a state folder given through a symlink is read and watched', async (t) => {
  const real = tempDir(t);
  write(real, 'features.yml', 'flags: []\n');
  const links = tempDir(t, 'vexil-links-');
  symlinkSync(real, join(links, 'state'));
  const source = createLocalSource({ ...STATE_LIMITS, path: join(links, 'state') });
  const fs = await current(source);
  t.same(
    fs.files.map((f) => f.path),
    ['features.yml'],
  );
  let wake: (() => void) | undefined;
  const unwatch = source.watch!(() => wake?.());
  t.teardown(unwatch);
  await new Promise<void>((r) => (wake = r)); // armed
  const changed = new Promise<void>((r) => (wake = r));
  write(real, 'features.yml', 'flags: [] # edited\n');
  await changed;
  t.pass('an edit in the real folder is reported');
});

t.test('a file still being written is read again once it has settled', async (t) => {
  const root = tempDir(t);
  // In-place writers truncate, then write: the folder briefly holds a partial (here: still valid)
  // file whose mtime is fresh. The complete content lands 10 ms later, within the settle delay.
  write(root, 'features.yml', 'flags: []\n');
  const source = createLocalSource({ ...STATE_LIMITS, path: root });
  const reading = current(source);
  setTimeout(() => write(root, 'features.yml', 'flags: []\nsegments: []\n'), 10);
  t.equal(await text(await reading, 'features.yml'), 'flags: []\nsegments: []\n', 'the settled content, not the partial one');

  // An old file is read at once, without waiting.
  const old = new Date(Date.now() - 60_000);
  utimesSync(join(root, 'features.yml'), old, old);
  t.equal(await text(await current(source), 'features.yml'), 'flags: []\nsegments: []\n');
});
