import t from 'tap';
import { readState } from '../../src/store/read-state.js';
import type { FileSet, SourceFile } from '../../src/sources/types.js';
import { createBuildCache } from '../../src/store/build-cache.js';
import { createParseCache } from '../../src/store/parse-cache.js';
import { STATE_LIMITS } from '../support/config-defaults.js';

// A file set like a git revision's: files named by blob id, bytes read on demand (and counted).
const enc = new TextEncoder();
function fileSet(rev: string, files: Record<string, string>, reads: string[]): FileSet {
  const list: SourceFile[] = Object.entries(files).map(([path, text]) => ({
    path,
    contentId: `blob:${text.length}:${text}`,
    bytes: async () => {
      reads.push(path);
      return enc.encode(text);
    },
  }));
  return { revision: { id: rev, ref: rev }, files: list };
}

const flags = (d: string) => `namespace: prod\nflags:\n  - key: a\n    name: A\n    description: ${d}\n    enabled: true\n    variants: [{ key: on }]\n    rules:\n      - segment: beta\n        distributions: [{ variant: on, rollout: 100 }]\n`;
const segments = `namespace: prod\nsegments:\n  - key: beta\n    name: Beta\n    match_type: ALL_MATCH_TYPE\n`;
const other = `namespace: other\nflags:\n  - key: o\n    name: O\n`;

t.test('files whose content the parse cache holds are not read again', async (t) => {
  const parseCache = createParseCache();
  const buildCache = createBuildCache();
  const reads: string[] = [];
  const opts = { parseCache, buildCache, now: new Date('2026-01-01T00:00:00Z') };
  const main = await readState(fileSet('main', { 'f.features.yml': flags('one'), 's.features.yml': segments, 'o.features.yml': other }, reads), { ...STATE_LIMITS, reference: 'main', ...opts });
  t.same(reads.sort(), ['f.features.yml', 'o.features.yml', 's.features.yml'], 'first load reads everything');
  reads.length = 0;
  const dev = await readState(fileSet('dev', { 'f.features.yml': flags('two'), 's.features.yml': segments, 'o.features.yml': other }, reads), { ...STATE_LIMITS, reference: 'dev', ...opts });
  t.same(reads, ['f.features.yml'], 'only the changed file is read');
  t.same(dev.problems, []);
  t.equal(dev.snapshot!.namespaces.get('prod')!.flags.get('a')!.description, 'two');
  t.equal(dev.snapshot!.namespaces.get('other'), main.snapshot!.namespaces.get('other'), 'untouched namespace shared');
  // The same result as a load that reads everything.
  const plain = await readState(fileSet('dev', { 'f.features.yml': flags('two'), 's.features.yml': segments, 'o.features.yml': other }, []), { ...STATE_LIMITS, reference: 'dev', now: opts.now });
  t.same(dev.snapshot, plain.snapshot);
  t.same(dev.files, plain.files);
});

t.test('an unread file that turns out to be needed is read, and problems are located in it', async (t) => {
  const parseCache = createParseCache();
  const reads: string[] = [];
  const opts = { parseCache, buildCache: createBuildCache() };
  await readState(fileSet('main', { 'f.features.yml': flags('one'), 's.features.yml': segments }, reads), { ...STATE_LIMITS, reference: 'main', ...opts });
  reads.length = 0;
  // The segments file loses `beta`: the error is in f.features.yml, which did not change.
  const bad = await readState(fileSet('bad', { 'f.features.yml': flags('one'), 's.features.yml': segments.replace('beta', 'gamma') }, reads), { ...STATE_LIMITS, reference: 'bad', ...opts });
  t.notOk(bad.snapshot);
  t.same(reads.sort(), ['f.features.yml', 's.features.yml'], 'f.features.yml read after all, to locate the problem');
  t.match(bad.problems, [{ rule: 'rule.segment.unknown', file: 'f.features.yml', line: 9, column: 18 }]);
  const plain = await readState(fileSet('bad', { 'f.features.yml': flags('one'), 's.features.yml': segments.replace('beta', 'gamma') }, []), { ...STATE_LIMITS, reference: 'bad' });
  t.same(bad.problems, plain.problems, 'same problems as a load that reads everything');
});

t.test('an entry that left the parse cache meanwhile: the file is read', async (t) => {
  const parseCache = createParseCache();
  const reads: string[] = [];
  const set = () => fileSet('main', { 'f.features.yml': flags('one'), 's.features.yml': segments }, reads);
  await readState(set(), { ...STATE_LIMITS, reference: 'main', parseCache });
  // Sweep everything out, but let `has` answer from before (a sweep between the check and the load).
  const stale = { ...parseCache, has: () => true };
  for (let i = 0; i < 5; i++) parseCache.nextGeneration();
  parseCache.sweep(0);
  reads.length = 0;
  const r = await readState(set(), { ...STATE_LIMITS, reference: 'main', parseCache: stale });
  t.ok(r.snapshot, 'loaded');
  t.same(reads.sort(), ['f.features.yml', 's.features.yml']);
  t.equal(r.snapshot!.namespaces.get('prod')!.flags.get('a')!.description, 'one');
});
