/**
 * `/meta/snapshots` quotes the offending lines of a rejected revision: bad commits pushed to a
 * real git repository (served by `git http-backend`), read back through the public API. Also the
 * InvalidStateError of a bad first build, and a 1 MB one-line file whose excerpt stays small.
 */
import { pino } from 'pino';
import tap from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { CUT, EXCERPT_MAX_LINE_CHARS } from '../../src/state/excerpt.js';
import { InvalidStateError } from '../../src/store/invalid-state-error.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import type { Teardown } from '../support/git-repo.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

/** Lines `from`..`to` (1-based, inclusive) of a fixture, as the excerpt should show them. */
function fixtureLines(name: string, from: number, to: number): string[] {
  return gitFixture(name).split('\n').slice(from - 1, to);
}

async function serveGit(t: Teardown) {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const store = g.store();
  await store.start();
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'git', VEXIL_STORAGE_GIT_REPOSITORY: g.url } });
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), storageType: 'git', version: 'test', host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  /** Pushes `files` to main, polls, and answers main's `lastRejected` as /meta/snapshots shows it. */
  const reject = async (files: Record<string, string>, message: string) => {
    const id = await g.repo.commit('main', files, { message });
    await store.refresh();
    const res = await fetch(`${server.url}/meta/snapshots`);
    const body = (await res.json()) as { references: Array<{ reference: string; lastRejected?: any }> };
    const main = body.references.find((r) => r.reference === 'main')!;
    return { id, text: JSON.stringify(main.lastRejected), lastRejected: main.lastRejected };
  };
  return { g, store, url: server.url, reject };
}

t.test('a YAML error and a semantic error: file, line, column and the lines around them', async (t) => {
  const { reject } = await serveGit(t);

  const yaml = await reject({ 'features.yml': gitFixture('yaml-error.yml') }, 'broken yaml');
  t.equal(yaml.lastRejected.revision.id, yaml.id);
  t.equal(yaml.lastRejected.problems.length, 1);
  t.match(yaml.lastRejected.problems[0], { severity: 'error', rule: 'yaml.syntax', file: 'features.yml', line: 11, column: 5 });
  t.same(yaml.lastRejected.problems[0].excerpt, { startLine: 9, lines: fixtureLines('yaml-error.yml', 9, 13) });
  t.equal(yaml.lastRejected.problems[0].excerpt.lines[2], '    rules:', 'the offending line');

  const semantic = await reject({ 'features.yml': gitFixture('unknown-variant.yml') }, 'unknown variant');
  t.equal(semantic.lastRejected.revision.id, semantic.id, 'the newer rejection replaces the older');
  t.match(semantic.lastRejected.problems, [
    { severity: 'error', rule: 'distribution.variant.unknown', file: 'features.yml', line: 14, column: 22, message: /unknown variant `hola`/ },
  ]);
  const excerpt = semantic.lastRejected.problems[0].excerpt;
  t.same(excerpt, { startLine: 12, lines: fixtureLines('unknown-variant.yml', 12, 16) });
  t.equal(excerpt.lines[14 - excerpt.startLine].slice(22 - 1), 'hola', 'line and column point at the unknown variant');
});

t.test('a problem located in a file the bad commit did not change (read from the parse cache at first)', async (t) => {
  const { g, store, reject } = await serveGit(t);
  // features.yml's rule uses the segment of segments/features.yml; the bad commit renames it there only.
  const features = gitFixture('broken.yml').replace('nobody-defined-this', 'everyone');
  await g.repo.commit('main', { 'features.yml': features, 'segments/features.yml': gitFixture('segments.yml') });
  await store.refresh();
  t.ok(store.get('main')!.namespaces.get('default')!.segments.has('everyone'), 'the good state is served');
  const r = await reject({ 'segments/features.yml': gitFixture('segments.yml').replace('key: everyone', 'key: everybody') }, 'rename the segment');
  const p = r.lastRejected.problems.find((x: any) => x.file === 'features.yml');
  t.ok(p, 'the problem is in the unchanged file');
  const lines = features.split('\n');
  t.same(p.excerpt, { startLine: p.line - 2, lines: lines.slice(p.line - 3, p.line + 2) });
  t.match(p.excerpt.lines[2], /segment: everyone/);
});

t.test('a 1 MB single-line bad file: the excerpt stays bounded', async (t) => {
  const { reject } = await serveGit(t);
  const line = `{"version": "1.4", "namespace": "default", "flags": [${'"x", '.repeat(210_000)}}`;
  t.ok(line.length > 1_000_000);
  const r = await reject({ 'features.yml': line }, 'huge line');
  const p = r.lastRejected.problems[0];
  t.match(p, { file: 'features.yml', line: 1, column: Number });
  t.ok(p.column > 1_000_000, `the error is at the end of the line (column ${p.column})`);
  t.equal(p.excerpt.startLine, 1);
  t.equal(p.excerpt.lines.length, 1);
  t.same(p.excerpt.truncatedLines, [1]);
  const shown: string = p.excerpt.lines[0];
  t.ok(shown.startsWith(CUT), 'shown from a later column');
  t.ok(shown.length <= EXCERPT_MAX_LINE_CHARS + 2);
  t.equal(shown[CUT.length + p.column - p.excerpt.firstColumn], '}', 'the window holds the offending character');
  t.ok(r.text.length < 4_000, `lastRejected stays small: ${r.text.length} characters`);
});

t.test('a bad first build: InvalidStateError carries the excerpts too', async (t) => {
  const g = await startGitFixture(t);
  await g.repo.commit('main', { 'features.yml': gitFixture('unknown-variant.yml') });
  const store = g.store();
  const err = await store.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof InvalidStateError);
  const p = (err as InvalidStateError).problems[0]!;
  t.match(p, { line: 14, column: 22 });
  t.same(p.excerpt, { startLine: 12, lines: fixtureLines('unknown-variant.yml', 12, 16) });
});
