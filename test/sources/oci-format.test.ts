/**
 * The bundle format (pure): build → read round trips for manifest 1.1 and 1.0, Flipt-built
 * manifests read with their own media types, and the refusals; plus OCI reference parsing.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import {
  BUNDLE_ARTIFACT_TYPE,
  BUNDLE_LAYER_JSON,
  BUNDLE_LAYER_YAML,
  EMPTY_JSON_DIGEST,
  FLIPT_ARTIFACT_TYPE,
  FLIPT_LAYER_MEDIA_TYPE,
  OCI_EMPTY_MEDIA_TYPE,
  buildBundle,
  readBundleManifest,
  sha256Digest,
} from '../../src/sources/oci/bundle-format.js';
import { formatOciReference, parseOciReference } from '../../src/sources/oci/reference.js';

const enc = (s: string) => new TextEncoder().encode(s);
const files = [
  { path: 'prod/features.yml', bytes: enc('namespace: prod\n') },
  { path: '.vexil.yml', bytes: enc('include: ["**features.yml"]\n') },
  { path: 'default.features.json', bytes: enc('{"namespace":"default"}') },
];
const created = '2026-11-26T04:00:00Z';

t.test('sha256 digests and the empty config digest', async (t) => {
  t.equal(EMPTY_JSON_DIGEST, `sha256:${createHash('sha256').update('{}').digest('hex')}`);
  t.equal(sha256Digest(enc('')), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

t.test('manifest 1.1: artifactType, OCI empty config, one titled layer per file, round trip', async (t) => {
  const b = buildBundle(files, { manifestVersion: '1.1', created });
  t.equal(b.manifest.artifactType, BUNDLE_ARTIFACT_TYPE);
  t.same(b.manifest.config, { mediaType: OCI_EMPTY_MEDIA_TYPE, digest: EMPTY_JSON_DIGEST, size: 2, data: 'e30=' });
  t.same(b.manifest.annotations, { 'org.opencontainers.image.created': created });
  t.same(
    b.manifest.layers.map((l) => [l.annotations?.['org.opencontainers.image.title'], l.mediaType]),
    [
      ['.vexil.yml', BUNDLE_LAYER_YAML],
      ['default.features.json', BUNDLE_LAYER_JSON],
      ['prod/features.yml', BUNDLE_LAYER_YAML],
    ],
    'layers sorted by path, media type by extension',
  );
  t.equal(b.manifestDigest, sha256Digest(b.manifestBytes));
  t.equal(new TextDecoder().decode(b.blobs.get(EMPTY_JSON_DIGEST)), '{}', 'the config blob is in the blob set');
  for (const l of b.manifest.layers) {
    const blob = b.blobs.get(l.digest);
    t.ok(blob, `blob of ${l.digest}`);
    t.equal(sha256Digest(blob as Uint8Array), l.digest);
    t.equal(blob?.byteLength, l.size);
  }
  const read = readBundleManifest(b.manifestBytes);
  t.same(read.manifest, b.manifest);
  t.same(read.layers.map((l) => l.path), ['.vexil.yml', 'default.features.json', 'prod/features.yml']);

  const again = buildBundle([...files].reverse(), { manifestVersion: '1.1', created });
  t.equal(again.manifestDigest, b.manifestDigest, 'same input, any order → same bytes');
  t.not(buildBundle(files, { manifestVersion: '1.1', created: '2026-11-27T00:00:00Z' }).manifestDigest, b.manifestDigest);
});

t.test('manifest 1.0: the config media type carries the artifact type', async (t) => {
  const b = buildBundle(files, { manifestVersion: '1.0', created });
  t.equal(b.manifest.artifactType, undefined);
  t.same(b.manifest.config, { mediaType: BUNDLE_ARTIFACT_TYPE, digest: EMPTY_JSON_DIGEST, size: 2 });
  t.same(readBundleManifest(b.manifestBytes).layers.map((l) => l.path), ['.vexil.yml', 'default.features.json', 'prod/features.yml']);
});

t.test('build refuses what could not be read back', async (t) => {
  t.throws(() => buildBundle([], { manifestVersion: '1.1', created }), /at least one state file/);
  t.throws(() => buildBundle([{ path: '../x.yml', bytes: enc('') }], { manifestVersion: '1.1', created }), /cannot pack "..\/x.yml"/);
  t.throws(() => buildBundle([{ path: '/abs.yml', bytes: enc('') }], { manifestVersion: '1.1', created }), /relative/);
  t.throws(() => buildBundle([{ path: 'notes.txt', bytes: enc('') }], { manifestVersion: '1.1', created }), /only \.yml, \.yaml and \.json/);
  t.throws(
    () => buildBundle([files[0] as (typeof files)[0], files[0] as (typeof files)[0]], { manifestVersion: '1.1', created }),
    /twice/,
  );
});

function fliptManifest(version: '1.0' | '1.1', layers: Array<{ mediaType: string; digest: string; size: number; annotations?: Record<string, string> }>) {
  return enc(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      ...(version === '1.1' ? { artifactType: FLIPT_ARTIFACT_TYPE } : {}),
      config:
        version === '1.1'
          ? { mediaType: 'application/vnd.oci.empty.v1+json', digest: EMPTY_JSON_DIGEST, size: 2, data: 'e30=' }
          : { mediaType: FLIPT_ARTIFACT_TYPE, digest: EMPTY_JSON_DIGEST, size: 2 },
      layers,
      annotations: { 'org.opencontainers.image.created': created },
    }),
  );
}

t.test('Flipt-built manifests: Flipt media types, no titles → paths the default discovery selects', async (t) => {
  const d = (s: string) => sha256Digest(enc(s));
  for (const version of ['1.0', '1.1'] as const) {
    const read = readBundleManifest(
      fliptManifest(version, [
        { mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+json`, digest: d('a'), size: 1, annotations: { 'io.flipt.features.namespace': 'default' } },
        { mediaType: FLIPT_LAYER_MEDIA_TYPE, digest: d('b'), size: 1, annotations: { 'io.flipt.features.namespace': 'production' } },
        { mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+yaml`, digest: d('c'), size: 1, annotations: { 'io.flipt.features.namespace': 'default' } },
        { mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+yml`, digest: d('d'), size: 1 },
      ]),
    );
    t.same(
      read.layers.map((l) => l.path),
      ['default.features.json', 'production.features.json', 'default.features.yml', `${d('d').slice(7)}.features.yml`],
      `manifest ${version}`,
    );
  }
  const dup = readBundleManifest(
    fliptManifest('1.1', [
      { mediaType: FLIPT_LAYER_MEDIA_TYPE, digest: d('a'), size: 1, annotations: { 'io.flipt.features.namespace': 'default' } },
      { mediaType: FLIPT_LAYER_MEDIA_TYPE, digest: d('b'), size: 1, annotations: { 'io.flipt.features.namespace': 'default' } },
    ]),
  );
  t.same(dup.layers.map((l) => l.path), ['default.features.json', `default-${d('b').slice(7, 19)}.features.json`], 'two documents of one namespace');
});

t.test('refusals name what is wrong', async (t) => {
  const d = sha256Digest(enc('a'));
  const manifest = (over: Record<string, unknown>) =>
    enc(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        artifactType: BUNDLE_ARTIFACT_TYPE,
        config: { mediaType: OCI_EMPTY_MEDIA_TYPE, digest: EMPTY_JSON_DIGEST, size: 2 },
        layers: [{ mediaType: BUNDLE_LAYER_YAML, digest: d, size: 1, annotations: { 'org.opencontainers.image.title': 'features.yml' } }],
        ...over,
      }),
    );
  t.ok(readBundleManifest(manifest({})), 'the base manifest is fine');
  t.throws(() => readBundleManifest(enc('nope')), /not JSON/);
  t.throws(() => readBundleManifest(enc('[]')), /not a JSON object/);
  t.throws(
    () => readBundleManifest(enc(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [] }))),
    /image index .* not a bundle manifest/,
  );
  t.throws(() => readBundleManifest(manifest({ mediaType: 'application/vnd.docker.distribution.manifest.v2+json' })), /Docker image manifest/);
  t.throws(() => readBundleManifest(manifest({ schemaVersion: 1 })), /schemaVersion/);
  t.throws(() => readBundleManifest(manifest({ config: undefined })), /config is missing/);
  t.throws(() => readBundleManifest(manifest({ layers: undefined })), /no "layers" array/);
  t.throws(
    () => readBundleManifest(manifest({ artifactType: undefined, config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: d, size: 1 } })),
    /container image/,
  );
  t.throws(() => readBundleManifest(manifest({ artifactType: 'application/x-other' })), /artifact type is "application\/x-other"/);
  t.throws(
    () => readBundleManifest(manifest({ layers: [{ mediaType: 'application/vnd.oci.empty.v1+json', digest: d, size: 2 }] })),
    new RegExp(`layer "${d}": type "application/vnd.oci.empty.v1\\+json": unexpected media type`),
  );
  t.throws(() => readBundleManifest(manifest({ layers: [{ mediaType: `${FLIPT_LAYER_MEDIA_TYPE}+xml`, digest: d, size: 1 }] })), /unexpected media type/);
  t.throws(() => readBundleManifest(manifest({ layers: [{ mediaType: BUNDLE_LAYER_YAML, digest: 'sha256:abc', size: 1 }] })), /layers\[0\] digest/);
  t.throws(() => readBundleManifest(manifest({ layers: [{ mediaType: BUNDLE_LAYER_YAML, digest: d, size: -1 }] })), /layers\[0\] size/);
  t.throws(() => readBundleManifest(manifest({ layers: [{ mediaType: BUNDLE_LAYER_YAML, digest: d, size: 1 }] })), /no org\.opencontainers\.image\.title/);
  t.throws(
    () => readBundleManifest(manifest({ layers: [{ mediaType: BUNDLE_LAYER_YAML, digest: d, size: 1, annotations: { 'org.opencontainers.image.title': '../etc/x.yml' } }] })),
    /title "..\/etc\/x.yml"/,
  );
});

t.test('OCI references', async (t) => {
  t.same(parseOciReference('registry.example.com/team/flags:v1'), { scheme: 'https', registry: 'registry.example.com', repository: 'team/flags', tag: 'v1' });
  t.same(parseOciReference('localhost:5000/flags'), { scheme: 'https', registry: 'localhost:5000', repository: 'flags', tag: 'latest' });
  t.same(parseOciReference('http://127.0.0.1:5000/a/b:c'), { scheme: 'http', registry: '127.0.0.1:5000', repository: 'a/b', tag: 'c' });
  t.same(parseOciReference('127.0.0.1:5000/a:c', { insecure: true }).scheme, 'http');
  const digest = `sha256:${'a'.repeat(64)}`;
  t.same(parseOciReference(`ghcr.io/org/flags@${digest}`), { scheme: 'https', registry: 'ghcr.io', repository: 'org/flags', digest });
  t.same(parseOciReference(`ghcr.io/org/flags:v1@${digest}`).digest, digest, 'a digest wins over a tag');
  t.equal(formatOciReference(parseOciReference('http://127.0.0.1:5000/a/b:c')), 'http://127.0.0.1:5000/a/b:c');
  t.equal(formatOciReference(parseOciReference(`https://ghcr.io/org/flags@${digest}`)), `ghcr.io/org/flags@${digest}`);
  t.throws(() => parseOciReference(''), /empty/);
  t.throws(() => parseOciReference('flags:v1'), /no registry host/);
  t.throws(() => parseOciReference('team/flags:v1'), /does not look like a registry host/);
  t.throws(() => parseOciReference('ftp://host.io/flags'), /unsupported scheme "ftp:\/\/"/);
  const withPassword = t.throws(() => parseOciReference('alice:s3cret@host.io/flags'), /credentials do not belong/) as unknown as Error;
  t.notMatch(withPassword.message, /s3cret/, 'the password is not echoed');
  t.throws(() => parseOciReference('host.io/Team/flags'), /repository name "Team\/flags" is not valid/);
  t.throws(() => parseOciReference('host.io/flags:-bad'), /tag "-bad" is not valid/);
  t.throws(() => parseOciReference('host.io/flags@sha256:xyz'), /digest "sha256:xyz"/);
  t.throws(() => parseOciReference('host.io:99999/flags'), /port 99999 is out of range/);
  t.throws(() => parseOciReference('host.io/'), /repository name is missing/);
});
