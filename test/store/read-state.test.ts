import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createLocalSource, LOCAL_REFERENCE } from '../../src/sources/local.js';
import { readState } from '../../src/store/read-state.js';
import { fixture, tempState } from './temp-state.js';
import { STATE_LIMITS } from '../support/config-defaults.js';

async function readFolder(dir: string, maxFileSize?: number) {
  const source = createLocalSource({ ...STATE_LIMITS, path: dir, ...(maxFileSize !== undefined ? { maxFileSize } : {}) });
  const rev = (await source.refs()).get(LOCAL_REFERENCE)!;
  return readState(await source.files(rev), {
    ...STATE_LIMITS,
    reference: LOCAL_REFERENCE,
    ...(maxFileSize !== undefined ? { maxFileSize } : {}),
  });
}

const hello = fixture('hello/features.yml');

t.test('default discovery: state files are selected, read and loaded', async (t) => {
  const dir = tempState(t, 'two-files');
  writeFileSync(join(dir, 'README.md'), '# not state\n');
  const r = await readFolder(dir);
  t.same(r.files, ['flags.features.yml', 'segments.features.yml']);
  t.same(r.problems, []);
  t.ok(r.snapshot);
  t.equal(r.snapshot?.reference, LOCAL_REFERENCE);
  t.ok(r.snapshot?.namespaces.get('default')?.segments.get('staff'));
});

t.test('the index file at the root selects the files; .vexil.yml wins over .flipt.yml', async (t) => {
  const dir = tempState(t);
  mkdirSync(join(dir, 'flags'));
  writeFileSync(join(dir, 'flags/hello.yml'), hello);
  writeFileSync(join(dir, 'other.yml'), 'this: [is not state\n');
  writeFileSync(join(dir, '.flipt.yml'), 'include:\n  - "other.yml"\n');
  writeFileSync(join(dir, '.vexil.yml'), 'version: "1.0"\ninclude:\n  - "flags/*.yml"\n');
  const r = await readFolder(dir);
  t.same(r.files, ['flags/hello.yml']);
  t.same(r.problems, []);
  t.ok(r.snapshot?.namespaces.get('default')?.flags.get('greeting'));
});

t.test('a selected file over the size limit is a located problem, not a crash', async (t) => {
  const dir = tempState(t, 'hello');
  writeFileSync(join(dir, 'big.features.yml'), `# ${'x'.repeat(hello.length + 100)}\n`);
  writeFileSync(join(dir, 'big-but-ignored.txt'), 'y'.repeat(hello.length + 100));
  const r = await readFolder(dir, hello.length + 10);
  t.equal(r.snapshot, undefined, 'no snapshot');
  t.same(r.files, ['big.features.yml', 'features.yml']);
  t.same(
    r.problems.map((p) => [p.severity, p.rule, p.file]),
    [['error', 'file.too-large', 'big.features.yml']],
    'only the selected big file is reported',
  );
  t.match(r.problems[0], { message: /over the limit/, hint: /max_file_size/ });
});

t.test('a selected symlink leaving the state folder is a located problem', async (t) => {
  const outside = tempState(t, 'bonjour');
  const dir = tempState(t, 'hello');
  symlinkSync(join(outside, 'features.yml'), join(dir, 'linked.features.yml'));
  const r = await readFolder(dir);
  t.equal(r.snapshot, undefined);
  t.match(r.problems, [{ severity: 'error', rule: 'file.symlink-outside-root', file: 'linked.features.yml' }]);
});

t.test('an unreadable index file stops the read with a problem on it', async (t) => {
  const outside = tempState(t);
  writeFileSync(join(outside, 'index.yml'), 'include: ["**"]\n');
  const dir = tempState(t, 'hello');
  symlinkSync(join(outside, 'index.yml'), join(dir, '.vexil.yml'));
  const r = await readFolder(dir);
  t.equal(r.snapshot, undefined);
  t.match(r.problems, [{ rule: 'file.symlink-outside-root', file: '.vexil.yml' }]);
});

t.test('storage.max_state_size: counted on the bytes read when a backend knows no sizes; the index file counts', async (t) => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  let reads = 0;
  const file = (path: string, text: string) => ({
    path,
    contentId: path,
    bytes: () => {
      reads++;
      return Promise.resolve(bytes(text));
    },
  });
  const text = hello.toString('utf8');
  const other = text.replace('namespace: default', 'namespace: other');
  const fileSet = {
    revision: { id: 'r1', ref: 'main' },
    files: [file('.vexil.yml', 'version: "1.0"\ninclude: ["*.yml"]\n'), file('a.yml', text), file('b.yml', other), file('c.yml', other.replace('other', 'third'))],
  };
  const limit = text.length + other.length; // the index file makes b.yml cross it
  const r = await readState(fileSet, { ...STATE_LIMITS, reference: 'main', maxStateSize: limit });
  t.notOk(r.snapshot);
  t.match(r.problems, [{ severity: 'error', rule: 'state.too-large', file: 'b.yml', message: new RegExp(`add up to more than ${limit} bytes: b\\.yml`) }]);
  t.equal(reads, 3, 'reading stopped at the file that crossed the limit');
  const roomy = await readState(fileSet, { ...STATE_LIMITS, reference: 'main', maxStateSize: 1024 * 1024 });
  t.ok(roomy.snapshot, 'the same files within the limit load');
});
