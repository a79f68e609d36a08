/**
 * The local bundle store (an OCI image layout): verified blobs, tags in index.json, and two
 * processes tagging at the same time without losing an entry.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { buildBundle, sha256Digest } from '../../src/sources/oci/bundle-format.js';
import { openBundleStore } from '../../src/sources/oci/bundle-store.js';
import type { Teardown } from '../support/git-repo.js';

const enc = (s: string) => new TextEncoder().encode(s);

function tempDir(t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bundles-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const bundle = (text: string, created = '2026-11-26T04:00:00Z') =>
  buildBundle([{ path: 'features.yml', bytes: enc(text) }], { manifestVersion: '1.1', created });

t.test('an OCI image layout: oci-layout, index.json with ref names, content-addressed blobs', async (t) => {
  const dir = tempDir(t);
  const store = await openBundleStore(dir);
  t.same(JSON.parse(readFileSync(join(dir, 'oci-layout'), 'utf8')), { imageLayoutVersion: '1.0.0' });
  t.same(await store.list(), []);

  const digest = await store.writeBlob(enc('hello'));
  t.equal(digest, sha256Digest(enc('hello')));
  t.equal(readFileSync(join(dir, 'blobs', 'sha256', digest.slice(7)), 'utf8'), 'hello');
  t.ok(await store.hasBlob(digest));
  t.notOk(await store.hasBlob(sha256Digest(enc('other'))));
  t.equal(new TextDecoder().decode(await store.readBlob(digest)), 'hello');
  t.equal(await store.writeBlob(enc('hello')), digest, 'writing it again is a no-op');

  const b1 = bundle('a: 1\n');
  t.equal(await store.tag('flags:v1', b1.manifestBytes), b1.manifestDigest);
  t.equal(await store.resolve('flags:v1'), b1.manifestDigest);
  t.equal(await store.resolve('flags:v2'), undefined);
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
  t.match(index, {
    schemaVersion: 2,
    manifests: [
      {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: b1.manifestDigest,
        size: b1.manifestBytes.byteLength,
        artifactType: 'application/vnd.io.svc.features.v1',
        annotations: { 'org.opencontainers.image.ref.name': 'flags:v1' },
      },
    ],
  });

  const b2 = bundle('a: 2\n', '2026-11-26T05:00:00Z');
  await store.tag('127.0.0.1:5000/team/flags:v1', b1.manifestBytes);
  await store.tag('flags:v1', b2.manifestBytes);
  t.same(await store.list(), [
    { name: '127.0.0.1:5000/team/flags:v1', digest: b1.manifestDigest, size: b1.manifestBytes.byteLength, created: '2026-11-26T04:00:00Z' },
    { name: 'flags:v1', digest: b2.manifestDigest, size: b2.manifestBytes.byteLength, created: '2026-11-26T05:00:00Z' },
  ], 're-tagging replaces the entry; list is sorted by name');

  const reopened = await openBundleStore(dir);
  t.equal(await reopened.resolve('flags:v1'), b2.manifestDigest, 'a restart sees the tags');
  t.same(readdirSync(dir).sort(), ['blobs', 'index.json', 'oci-layout'], 'no temp or lock files left behind');
});

t.test('a corrupt blob is refused and removed; bad digests and foreign folders are refused', async (t) => {
  const dir = tempDir(t);
  const store = await openBundleStore(dir);
  const digest = await store.writeBlob(enc('good'));
  writeFileSync(join(dir, 'blobs', 'sha256', digest.slice(7)), 'evil');
  await t.rejects(store.readBlob(digest), /is corrupt .* removed/);
  t.notOk(await store.hasBlob(digest));
  await t.rejects(store.readBlob(digest), /not in the bundle store/);
  await t.rejects(store.readBlob('sha256:../../etc/passwd'), /not a sha256 digest/);
  await t.rejects(store.tag('x', enc('not json')), /not JSON/);

  const other = tempDir(t);
  writeFileSync(join(other, 'oci-layout'), '{"imageLayoutVersion":"9"}');
  await t.rejects(openBundleStore(other), /not an OCI image layout 1\.0\.0/);
});

t.test('two processes tagging at once: every tag survives', async (t) => {
  const dir = tempDir(t);
  const store = await openBundleStore(dir);
  const storeModule = fileURLToPath(new URL('../../src/sources/oci/bundle-store.ts', import.meta.url));
  const script = `
    const { openBundleStore } = await import(${JSON.stringify(storeModule)});
    const s = await openBundleStore(${JSON.stringify(dir)});
    for (let i = 0; i < 15; i++) await s.tag('child:' + i, new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, n: i })));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  for (let i = 0; i < 15; i++) await store.tag(`parent:${i}`, enc(JSON.stringify({ schemaVersion: 2, p: i })));
  t.equal(await exited, 0);
  const names = (await store.list()).map((b) => b.name);
  t.equal(names.length, 30, 'no lost update');
  t.ok(names.includes('child:14') && names.includes('parent:14'));
});
