/**
 * A damaged Git cache is found and repaired, never served from or blamed on the state: a real
 * vexil store over the git source fills its cache from a real `git http-backend`, the cache is
 * damaged on disk (a truncated pack, zero-length pack and index files, a flipped bit), and the
 * next run must serve the right commit, log what it found, leave a cache whose packs are whole,
 * and keep following the branch. Damage appearing while vexil runs is repaired on the failed read.
 */
import { closeSync, openSync, readdirSync, readSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import tap, { type Test } from 'tap';
import { checkPacks } from '../../src/sources/git/cache-check.js';
import { gitFixture, gitUnavailableReason, greeting, startGitFixture, type GitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const state = () => ({ 'features.yml': gitFixture('hello.yml'), 'segments.features.yml': gitFixture('segments.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

type Line = { level: number; msg: string; [k: string]: unknown };

function capturingLogger() {
  const lines: Line[] = [];
  return { lines, logger: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) }) };
}

/** The mirror's folder in the fixture's cache. */
function mirrorDir(g: GitFixture): string {
  const dirs = readdirSync(g.cacheDir).filter((n) => n.endsWith('.git'));
  if (dirs.length !== 1) throw new Error(`expected one mirror in ${g.cacheDir}, found ${dirs.join(', ')}`);
  return join(g.cacheDir, dirs[0]!);
}

function packFiles(g: GitFixture): { pack: string; idx: string } {
  const dir = join(mirrorDir(g), 'objects', 'pack');
  const idx = readdirSync(dir).filter((n) => n.endsWith('.idx'));
  if (idx.length !== 1) throw new Error(`expected one pack, found ${idx.length}`);
  return { idx: join(dir, idx[0]!), pack: join(dir, `${idx[0]!.slice(0, -4)}.pack`) };
}

function flipBit(file: string, at: number): void {
  const fd = openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ 0x10;
    writeSync(fd, b, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

/** A first run: fills the cache with main's commit, then stops. */
async function firstRun(t: Test) {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', state());
  const store = g.store();
  await store.start();
  t.equal(store.get()?.revision, c1, 'first run serves main');
  await store.close();
  t.same(await checkPacks(mirrorDir(g)), [], 'the cache the first run left is whole');
  return { g, c1 };
}

const DAMAGES: Array<{ name: string; damage: (g: GitFixture) => void; file: RegExp; problem: RegExp }> = [
  {
    name: 'a truncated pack',
    damage: (g) => {
      const { pack } = packFiles(g);
      truncateSync(pack, Math.floor(statSync(pack).size / 2));
    },
    file: /^objects\/pack\/pack-[0-9a-f]{40}\.pack$/,
    problem: /truncated|checksum/,
  },
  {
    name: 'zero-length pack and index',
    damage: (g) => {
      const { pack, idx } = packFiles(g);
      truncateSync(pack, 0);
      truncateSync(idx, 0);
    },
    file: /^objects\/pack\/pack-[0-9a-f]{40}\.idx$/,
    problem: /^the index is empty \(0 bytes\)$/,
  },
  {
    name: 'zero-length pack and index beside the real ones (sorted first)',
    damage: (g) => {
      const dir = join(mirrorDir(g), 'objects', 'pack');
      writeFileSync(join(dir, `pack-${'0'.repeat(40)}.pack`), '');
      writeFileSync(join(dir, `pack-${'0'.repeat(40)}.idx`), '');
    },
    file: new RegExp(`^objects/pack/pack-${'0'.repeat(40)}\\.idx$`),
    problem: /^the index is empty \(0 bytes\)$/,
  },
  {
    name: 'a bit flipped in the pack',
    damage: (g) => {
      const { pack } = packFiles(g);
      flipBit(pack, Math.floor(statSync(pack).size / 2));
    },
    file: /^objects\/pack\/pack-[0-9a-f]{40}\.pack$/,
    problem: /does not match its checksum/,
  },
];

for (const d of DAMAGES) {
  t.test(`${d.name} between runs: found at start, replaced, the right commit served and followed`, async (t) => {
    const { g, c1 } = await firstRun(t);
    d.damage(g);
    t.not((await checkPacks(mirrorDir(g))).length, 0, 'the damage is seen by the check');

    const { logger, lines } = capturingLogger();
    const store = g.store({ source: g.source({ logger }), logger });
    await store.start();
    t.equal(store.get()?.revision, c1, 'the second run serves main at its commit');
    t.equal(greeting(store.get()), 'hello');
    const [main] = store.status();
    t.notOk(main?.lastRejected, 'nothing refused');
    t.notOk(main?.lastError, 'no error reported');

    const found = lines.filter((l) => /git cache damaged/.test(l.msg));
    t.equal(found.length, 1, 'the repair is logged once');
    t.equal(found[0]?.level, 40, 'as a warning');
    t.match(found[0], { when: 'found when the cache was opened', damage: [{ file: d.file, problem: d.problem }] });
    t.same(await checkPacks(mirrorDir(g)), [], 'the cache is whole again');

    const c2 = await g.repo.commit('main', bonjour);
    await store.refresh();
    t.equal(store.get()?.revision, c2, 'later commits are served');
    t.equal(greeting(store.get()), 'bonjour');
  });
}

t.test('damage appearing while running: the failed read checks the cache, replaces it and reads again', async (t) => {
  const { g, c1 } = await firstRun(t);
  const { logger, lines } = capturingLogger();
  const source = g.source({ logger });
  await source.cachedRefs(); // opens the cache while it is whole
  t.equal(lines.filter((l) => /git cache damaged/.test(l.msg)).length, 0, 'whole when opened');
  const { pack } = packFiles(g);
  truncateSync(pack, 12); // the pack header only: every object is gone

  const store = g.store({ source, logger });
  await store.start();
  t.equal(store.get()?.revision, c1, 'main served at its commit');
  t.equal(greeting(store.get()), 'hello');
  t.notOk(store.status()[0]?.lastRejected, 'nothing refused');
  const found = lines.filter((l) => /git cache damaged/.test(l.msg));
  t.equal(found.length, 1, 'the repair is logged once');
  t.match(found[0], { when: /^found after a failed read \(reading commit [0-9a-f]{40}: /, damage: [{ problem: /truncated/ }] });
  t.same(await checkPacks(mirrorDir(g)), [], 'the cache is whole again');
});

t.test('a failed read from a whole cache is not taken for damage: the cache is kept', async (t) => {
  const { g } = await firstRun(t);
  const { logger, lines } = capturingLogger();
  const source = g.source({ logger, directory: 'missing' });
  await t.rejects(source.files({ id: await g.repo.rev('main'), ref: 'main' }), /storage\.git\.directory "missing" does not exist/);
  t.equal(lines.filter((l) => /git cache/.test(l.msg)).length, 0, 'a missing directory is the content, not the cache: not even checked');
  const before = packFiles(g).pack;
  t.equal(packFiles(g).pack, before, 'the cache is kept');
});
