/**
 * `vexil bundle build` and `vexil bundle list` (local bundle store only), usage errors, config and
 * the failures that need no registry: an unknown local bundle, a closed port.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { run } from '../../src/cli/run.js';
import { FIXTURES } from '../store/temp-state.js';
import { cleanEnv, REPO, tempDir, vexilBundle } from './bundle-cli.js';

const DIGEST = /sha256:[0-9a-f]{64}/;

interface Manifest {
  artifactType?: string;
  config: { mediaType: string; digest: string };
  layers: Array<{ mediaType: string; digest: string; annotations?: Record<string, string> }>;
  annotations?: Record<string, string>;
}

function storedManifest(bundles: string, name: string): Manifest {
  const index = JSON.parse(readFileSync(join(bundles, 'index.json'), 'utf8')) as {
    manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
  };
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === name);
  if (entry === undefined) throw new Error(`${name} not in ${bundles}/index.json`);
  return JSON.parse(readFileSync(join(bundles, 'blobs', 'sha256', entry.digest.slice(7)), 'utf8')) as Manifest;
}

t.test('build examples/ → stored; list shows it (table and json)', async (t) => {
  const bundles = tempDir(t);
  const b = await vexilBundle(['build', '--dir', 'examples', '--bundles-dir', bundles, 'flags:v1']);
  t.equal(b.code, 0, b.stderr);
  const m = /^built flags:v1 (sha256:[0-9a-f]{64}) \(3 files, [\d.]+ k?B\)\n$/.exec(b.stdout);
  t.ok(m, b.stdout);
  const digest = m![1]!;
  t.equal(b.stderr, '');

  const manifest = storedManifest(bundles, 'flags:v1');
  t.equal(manifest.artifactType, 'application/vnd.io.svc.features.v1', 'manifest 1.1 by default');
  t.same(
    manifest.layers.map((l) => l.annotations?.['org.opencontainers.image.title']).sort(),
    ['checkout/features.yml', 'default.features.yml', 'segments.features.yml'],
    'one layer per state file, named by its path',
  );
  for (const l of manifest.layers) {
    const bytes = readFileSync(join(bundles, 'blobs', 'sha256', l.digest.slice(7)));
    const title = l.annotations!['org.opencontainers.image.title']!;
    t.same(bytes, readFileSync(join(REPO, 'examples', title)), `${title}: the file's bytes`);
  }

  const table = await vexilBundle(['list', '--bundles-dir', bundles]);
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^NAME\s+DIGEST\s+CREATED\s+SIZE$/);
  t.equal(lines.length, 2);
  t.match(lines[1], new RegExp(`^flags:v1\\s+${digest.slice(0, 19)}\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+[\\d.]+ k?B$`));

  const json = await vexilBundle(['list', '--format', 'json', '--bundles-dir', bundles]);
  t.equal(json.code, 0);
  const list = JSON.parse(json.stdout) as Array<{ name: string; digest: string; created: string; size: number }>;
  t.equal(list.length, 1);
  t.equal(list[0]!.name, 'flags:v1');
  t.equal(list[0]!.digest, digest);
  t.match(list[0]!.created, /^\d{4}-\d\d-\d\dT/);
  const stateBytes = ['checkout/features.yml', 'default.features.yml', 'segments.features.yml']
    .map((f) => readFileSync(join(REPO, 'examples', f)).byteLength)
    .reduce((a, b) => a + b, 0);
  t.ok(list[0]!.size > stateBytes, `size counts manifest, config and layers (${list[0]!.size} > ${stateBytes})`);
});

t.test('an empty store lists only the header, and [] as json; a missing one is not created', async (t) => {
  const bundles = join(tempDir(t), 'not-yet');
  const table = await vexilBundle(['list', '--bundles-dir', bundles]);
  t.equal(table.code, 0);
  t.match(table.stdout, /^NAME\s+DIGEST\s+CREATED\s+SIZE\n$/);
  const json = await vexilBundle(['list', '-f', 'json', '--bundles-dir', bundles]);
  t.same(JSON.parse(json.stdout), []);
  t.notOk(existsSync(bundles), 'list does not create the store');
  const push = await vexilBundle(['push', '--bundles-dir', bundles, 'flags:v1', 'localhost:5000/flags:v1']);
  t.equal(push.code, 1);
  t.match(push.stderr, /^vexil: bundle "flags:v1" not found: there is no bundle store at /);
  t.notOk(existsSync(bundles), 'neither does a push');
});

t.test('invalid state: located problems, exit 1, nothing stored', async (t) => {
  const bundles = tempDir(t);
  const dir = join(FIXTURES, 'broken');
  const r = await vexilBundle(['build', '-d', dir, '--bundles-dir', bundles, 'flags:bad']);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.match(r.stderr, /is invalid \(\d+ errors?, \d+ warnings?\); no bundle built/);
  t.match(r.stderr, new RegExp(`^${dir}/features\\.yml:\\d+:\\d+: error [a-z0-9.-]+: .*nobody-defined-this`, 'm'));
  t.match(r.stderr, /^ {2}\s*\^$/m, 'a caret under the column');
  t.notOk(existsSync(join(bundles, 'index.json')), 'the store was not even created');
  t.same(readdirSync(bundles), []);
});

t.test('warnings are shown on stderr and do not stop the build', async (t) => {
  const bundles = tempDir(t);
  const r = await vexilBundle(['build', '--dir', join(FIXTURES, 'warning'), '--bundles-dir', bundles, 'warned']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^built warned:latest sha256:/, 'no tag → latest');
  t.match(r.stderr, /features\.yml:\d+:\d+: warning /);
});

t.test('the index file travels with the state files it selects', async (t) => {
  const dir = tempDir(t, 'vexil-state-');
  const bundles = tempDir(t);
  mkdirSync(join(dir, 'flags'));
  writeFileSync(join(dir, '.flipt.yml'), 'version: "1.0"\ninclude:\n  - "flags/*.yml"\n');
  writeFileSync(join(dir, 'flags', 'hello.yml'), readFileSync(join(FIXTURES, 'hello', 'features.yml')));
  writeFileSync(join(dir, 'notes.yml'), 'not: state\n');
  const r = await vexilBundle(['build', '--dir', dir, '--bundles-dir', bundles, 'team/flags:v2']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^built team\/flags:v2 sha256:[0-9a-f]{64} \(2 files, /);
  const titles = storedManifest(bundles, 'team/flags:v2').layers.map((l) => l.annotations?.['org.opencontainers.image.title']);
  t.same(titles.sort(), ['.flipt.yml', 'flags/hello.yml'], 'index + selected file; notes.yml left out');
});

t.test('a folder without state files builds nothing', async (t) => {
  const dir = tempDir(t, 'vexil-state-');
  const bundles = tempDir(t);
  writeFileSync(join(dir, 'README.md'), '# nothing here\n');
  const r = await vexilBundle(['build', '--dir', dir, '--bundles-dir', bundles, 'empty:v1']);
  t.equal(r.code, 1);
  t.match(r.stderr, /no state files in .*; no bundle built/);
  t.notOk(existsSync(join(bundles, 'index.json')));
});

t.test('same state + SOURCE_DATE_EPOCH → same digest; rebuilding a tag replaces it', async (t) => {
  const bundles = tempDir(t);
  const deps = { env: cleanEnv({ SOURCE_DATE_EPOCH: '1700000000' }) };
  const a = await vexilBundle(['build', '-d', 'examples', '--bundles-dir', bundles, 'flags:v1'], { deps });
  const b = await vexilBundle(['build', '-d', 'examples', '--bundles-dir', bundles, 'flags:v1'], { deps });
  t.equal(a.code, 0, a.stderr);
  t.equal(DIGEST.exec(a.stdout)?.[0], DIGEST.exec(b.stdout)?.[0]);
  t.equal(storedManifest(bundles, 'flags:v1').annotations?.['org.opencontainers.image.created'], '2023-11-14T22:13:20Z');
  const c = await vexilBundle(['build', '-d', join(FIXTURES, 'hello'), '--bundles-dir', bundles, 'flags:v1'], { deps });
  t.equal(c.code, 0);
  const list = JSON.parse((await vexilBundle(['list', '-f', 'json', '--bundles-dir', bundles])).stdout) as Array<{ digest: string }>;
  t.equal(list.length, 1, 'one entry per name');
  t.equal(list[0]!.digest, DIGEST.exec(c.stdout)?.[0]);
});

t.test('--config: bundles_directory (relative to the config file) and manifest_version', async (t) => {
  const dir = tempDir(t, 'vexil-config-');
  writeFileSync(join(dir, 'vexil.yml'), 'storage:\n  oci:\n    bundles_directory: my-bundles\n    manifest_version: "1.0"\n');
  const r = await vexilBundle(['build', '--config', join(dir, 'vexil.yml'), '-d', join(REPO, 'examples'), 'flags:v1']);
  t.equal(r.code, 0, r.stderr);
  const manifest = storedManifest(join(dir, 'my-bundles'), 'flags:v1');
  t.equal(manifest.artifactType, undefined, 'manifest 1.0: no artifactType');
  t.equal(manifest.config.mediaType, 'application/vnd.io.svc.features.v1', 'manifest 1.0: the type is the config media type');

  const v11 = await vexilBundle(['build', '-c', join(dir, 'vexil.yml'), '--manifest-version', '1.1', '-d', join(REPO, 'examples'), 'flags:v2']);
  t.equal(v11.code, 0);
  t.equal(storedManifest(join(dir, 'my-bundles'), 'flags:v2').artifactType, 'application/vnd.io.svc.features.v1', 'the flag wins');

  writeFileSync(join(dir, 'bad.yml'), 'storage:\n  oci:\n    manifest_version: "2.0"\n');
  const bad = await vexilBundle(['list', '--config', join(dir, 'bad.yml')]);
  t.equal(bad.code, 1, 'an invalid config fails (exit 1)');
  t.match(bad.stderr, /manifest_version/);
});

t.test('relative --dir and --bundles-dir start from the working folder', async (t) => {
  const cwd = tempDir(t, 'vexil-cwd-');
  mkdirSync(join(cwd, 'state'));
  writeFileSync(join(cwd, 'state', 'features.yml'), readFileSync(join(FIXTURES, 'hello', 'features.yml')));
  const r = await vexilBundle(['build', '-d', 'state', '--bundles-dir', 'b', 'hello:v1'], { cwd });
  t.equal(r.code, 0, r.stderr);
  t.ok(existsSync(join(cwd, 'b', 'index.json')));
  const l = await vexilBundle(['list', '--bundles-dir', 'b', '-f', 'json'], { cwd });
  t.equal((JSON.parse(l.stdout) as Array<{ name: string }>)[0]?.name, 'hello:v1');
});

t.test('without --bundles-dir or bundles_directory: bundles/ under data_dir', async (t) => {
  const dir = tempDir(t, 'vexil-data-');
  const r = await vexilBundle(['build', '-d', 'examples', 'flags:v1'], { deps: { env: cleanEnv({ VEXIL_DATA_DIR: dir }) } });
  t.equal(r.code, 0, r.stderr);
  t.ok(existsSync(join(dir, 'bundles', 'index.json')));
});

t.test('push of a bundle the store does not have: exit 1, names it', async (t) => {
  const bundles = tempDir(t);
  const r = await vexilBundle(['push', '--bundles-dir', bundles, 'nope:v1', 'localhost:5000/nope:v1']);
  t.equal(r.code, 1);
  t.match(r.stderr, /^vexil: bundle "nope:v1" not found in .*\n$/);
});

t.test('an unreachable registry (a closed port): exit 1 naming host:port', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  const bundles = tempDir(t);
  t.equal((await vexilBundle(['build', '-d', 'examples', '--bundles-dir', bundles, 'flags:v1'])).code, 0);
  for (const args of [
    ['push', '--insecure', '--bundles-dir', bundles, 'flags:v1', `127.0.0.1:${port}/team/flags:v1`],
    ['pull', '--bundles-dir', bundles, `http://127.0.0.1:${port}/team/flags:v1`],
  ]) {
    const r = await vexilBundle(args);
    t.equal(r.code, 1, args[0]);
    t.match(r.stderr, new RegExp(`^vexil: cannot ${args[0]} .*registry 127\\.0\\.0\\.1:${port} unreachable`, 'm'));
    t.equal(r.stderr.trimEnd().split('\n').filter((l) => l.startsWith('vexil:')).length, 1, 'one error line');
  }
});

t.test('help', async (t) => {
  for (const args of [['--help'], ['-h'], ['help'], ['build', '--help'], ['push', '-h']]) {
    const r = await vexilBundle(args);
    t.equal(r.code, 0, args.join(' '));
    t.match(r.stdout, /^Usage: vexil bundle build \[--dir PATH\]/);
  }
});

t.test('vexil help bundle, and bundle in the general help', async (t) => {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (s: string) => void (out.stdout += s), stderr: (s: string) => void (out.stderr += s), cwd: REPO };
  t.equal(await run(['help', 'bundle'], io), 0);
  t.match(out.stdout, /^Usage: vexil bundle build/);
  out.stdout = '';
  t.equal(await run(['--help'], io), 0);
  t.match(out.stdout, /^ {2}bundle {6}Build, list, push and pull OCI bundles/m);
});

t.test('usage errors exit 2 with the usage', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /missing bundle command/],
    [['frob'], /unknown bundle command "frob"/],
    [['build'], /missing NAME\[:TAG\]/],
    [['build', 'a:v1', 'b:v1'], /unexpected argument "b:v1"/],
    [['build', '--dir', 'no/such/folder', 'flags:v1'], /no such folder: no\/such\/folder/],
    [['build', '-d', 'examples', '127.0.0.1:5000/flags:v1'], /names a registry/],
    [['build', '-d', 'examples', 'Flags:v1'], /not a bundle name/],
    [['build', '-d', 'examples', 'flags@sha256:abc'], /digest cannot be built/],
    [['build', '-d', 'examples', '--manifest-version', '2.0', 'flags:v1'], /--manifest-version must be 1\.0 or 1\.1/],
    [['build', '--format', 'json', 'flags:v1'], /--format/],
    [['list', '--format', 'xml'], /unknown format "xml"/],
    [['list', 'extra'], /unexpected argument "extra"/],
    [['push', 'flags:v1'], /missing REMOTE/],
    [['push', 'flags:v1', 'not-a-registry/flags:v1'], /does not look like a registry host/],
    [['pull'], /missing REMOTE/],
    [['pull', 'flags:v1'], /no registry host/],
    [['pull', '--username', 'alice', 'localhost:5000/flags:v1'], /--username needs a password/],
    [['pull', '--bogus', 'localhost:5000/flags:v1'], /--bogus/],
  ];
  for (const [args, message] of cases) {
    const r = await vexilBundle(args);
    t.equal(r.code, 2, `${args.join(' ') || '(nothing)'} exits 2`);
    t.match(r.stderr, message, args.join(' '));
    t.match(r.stderr, /Usage: vexil bundle/);
    t.equal(r.stdout, '');
  }
});

t.test('a password on the command line is refused without echoing it', async (t) => {
  for (const args of [
    ['push', '--username', 'alice', '--password', 'hunter22', 'flags:v1', 'localhost:5000/flags:v1'],
    ['pull', '--password=hunter22', 'localhost:5000/flags:v1'],
    ['pull', '-phunter22', 'localhost:5000/flags:v1'],
  ]) {
    const r = await vexilBundle(args);
    t.equal(r.code, 2);
    t.match(r.stderr, /password is not accepted on the command line.*--password-stdin/);
    t.notMatch(r.stderr + r.stdout, /hunter22/);
  }
});

t.test('--password-stdin: an empty stdin is a usage error', async (t) => {
  const r = await vexilBundle(['pull', '--username', 'alice', '--password-stdin', 'localhost:5000/flags:v1'], {
    deps: { readStdin: () => Promise.resolve('\n') },
  });
  t.equal(r.code, 2);
  t.match(r.stderr, /stdin held no password/);
});
