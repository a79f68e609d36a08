/**
 * vexil's own pack indexer (src/sources/git/pack-index.ts), with the real `git` as the oracle:
 * on packs git wrote (offset deltas, ref deltas, a blob over the inline size), the .idx must be
 * byte for byte the one `git index-pack` writes. Hostile packs (sizes that lie, deltas over the
 * limit, a broken checksum) are refused with a clear error, never inflated past their claims.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import tap from 'tap';
import { indexPack } from '../../src/sources/git/pack-index.js';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo, git, type Teardown } from '../support/git-repo.js';
import { zeroZlib } from '../support/git-zero-blob.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const MAX = 64 * 1024 * 1024;

/** A repository whose history makes git write deltas: a file growing over 30 commits, and a 3 MiB blob. */
async function historyRepo(t: Teardown) {
  const repo = await createTestRepo(t);
  for (let i = 1; i <= 30; i++) {
    await repo.commit('main', {
      'lines.txt': Array.from({ length: i * 200 }, (_, n) => `line ${n}`).join('\n'),
      'log.txt': Array.from({ length: i }, (_, n) => `v${n}`).join('\n'),
      ...(i === 30 ? { 'big.bin': 'x'.repeat(3 * 1024 * 1024) } : {}),
    });
  }
  return repo;
}

/** A pack of every object, written by `git pack-objects`, its .idx, and how many entries are deltas. */
async function packWith(gitdir: string, args: string[]): Promise<{ pack: Buffer; idx: Buffer; deltas: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-pack-'));
  try {
    const objects = await git(['--git-dir', gitdir, 'rev-list', '--objects', '--all']);
    await git(['--git-dir', gitdir, 'pack-objects', '-q', ...args, join(dir, 'p')], { input: `${objects}\n` });
    const name = readdirSync(dir).find((n) => n.endsWith('.pack'))!;
    const idxPath = join(dir, name.replace(/\.pack$/, '.idx'));
    // verify-pack -v: a delta's line has 7 columns (its depth and base last).
    const listed = await git(['verify-pack', '-v', idxPath]);
    const deltas = listed.split('\n').filter((l) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length;
    return { pack: readFileSync(join(dir, name)), idx: readFileSync(idxPath), deltas };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('the index of packs git wrote is byte for byte the one git index-pack writes', async (t) => {
  const repo = await historyRepo(t);
  for (const [what, args] of [
    ['offset deltas', ['--delta-base-offset']],
    ['ref deltas', []],
  ] as const) {
    const { pack, idx, deltas } = await packWith(repo.gitdir, [...args]);
    t.ok(deltas > 20, `${what}: git stored ${deltas} objects as deltas`);
    const ours = await indexPack(pack, { maxObjectSize: MAX });
    t.ok(ours.objects > 90, `${what}: ${ours.objects} objects`);
    t.equal(ours.packSha, pack.subarray(-20).toString('hex'));
    t.ok(ours.idx.equals(idx), `${what}: identical .idx`);
  }
});

/** A pack of the given entries (already encoded), with a valid trailer. */
function pack(...entries: Buffer[]): Buffer {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([head, ...entries]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

function header(type: number, size: number): Buffer {
  const bytes = [(type << 4) | (size % 16)];
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    bytes[bytes.length - 1]! |= 0x80;
    bytes.push(rest % 128);
  }
  return Buffer.from(bytes);
}

const varint = (n: number) => {
  const out: number[] = [];
  do {
    out.push((n % 128) | (n >= 128 ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return Buffer.from(out);
};

t.test('hostile packs are refused without inflating past what they declare', async (t) => {
  const blob = (content: Buffer, declared = content.length) => Buffer.concat([header(3, declared), zlib.deflateSync(content)]);

  await t.rejects(indexPack(pack(blob(Buffer.alloc(5000), 100)), { maxObjectSize: MAX }), /inflates to more than the 100 bytes it declares/, 'a small declared size over a large inflation');
  // 8 MiB of zeros declared as 2 MiB: streamed (over the inline size) and stopped at the claim.
  await t.rejects(
    indexPack(pack(Buffer.concat([header(3, 2 * 1024 * 1024), zeroZlib(8 * 1024 * 1024)])), { maxObjectSize: MAX }),
    /inflates to more than the 2097152 bytes it declares/,
  );
  await t.rejects(indexPack(pack(blob(Buffer.from('hi'), 5)), { maxObjectSize: MAX }), /inflates to 2 bytes, it declares 5/);

  const corrupt = pack(blob(Buffer.from('hello')));
  corrupt[corrupt.length - 1]! ^= 1;
  await t.rejects(indexPack(corrupt, { maxObjectSize: MAX }), /does not match its checksum/);

  // A delta (offset to the blob before it) whose result would be 1 GiB: refused from its first bytes.
  const base = blob(Buffer.from('base'));
  const deltaData = Buffer.concat([varint(4), varint(1024 ** 3), Buffer.from([0x90, 0x04])]);
  // Offset delta: after its header, the distance back to its base (the entry just before it).
  const delta = Buffer.concat([header(6, deltaData.length), Buffer.from([base.length]), zlib.deflateSync(deltaData)]);
  await t.rejects(indexPack(pack(base, delta), { maxObjectSize: MAX }), /an object stored as a delta of 1073741824 bytes, over the 67108864 bytes/);

  const ok = await indexPack(pack(blob(Buffer.from('hello\n'))), { maxObjectSize: MAX });
  t.equal(ok.objects, 1);
  // `git hash-object` of "hello\n".
  t.equal(ok.idx.subarray(8 + 1024, 8 + 1024 + 20).toString('hex'), 'ce013625030ba8dba906f756967f9e9ca394464a');
});
