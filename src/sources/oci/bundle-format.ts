/**
 * The bundle format, pure (no I/O): how state files become an OCI image manifest plus blobs, and
 * how a manifest (ours, or one built by Flipt) is read back into state-file layers.
 *
 * Ours: artifact type `application/vnd.io.svc.features.v1`; one layer per state file
 * (`…+yaml` / `…+json`) whose `org.opencontainers.image.title` is the file's path, so the index
 * file and sub-folders survive the round trip. Manifest 1.1 carries `artifactType` and the OCI
 * empty config; 1.0 (for registries that reject artifactType) puts the artifact type in the
 * config's media type.
 *
 * Flipt's: artifact type `application/vnd.io.flipt.features.v1`, layers
 * `application/vnd.io.flipt.features.namespace.v1[+json|+yaml|+yml]` (no suffix = JSON) without a
 * title; every layer is a document, so each gets a path the default discovery picks up.
 */
import { createHash } from 'node:crypto';
import type { BuiltBundle, BundleFile, BundleLayer, Descriptor, ImageManifest } from './types.js';

export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const OCI_IMAGE_CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
export const OCI_EMPTY_MEDIA_TYPE = 'application/vnd.oci.empty.v1+json';

export const BUNDLE_ARTIFACT_TYPE = 'application/vnd.io.svc.features.v1';
export const BUNDLE_LAYER_YAML = `${BUNDLE_ARTIFACT_TYPE}+yaml`;
export const BUNDLE_LAYER_JSON = `${BUNDLE_ARTIFACT_TYPE}+json`;
export const FLIPT_ARTIFACT_TYPE = 'application/vnd.io.flipt.features.v1';
export const FLIPT_LAYER_MEDIA_TYPE = 'application/vnd.io.flipt.features.namespace.v1';

export const ANNOTATION_TITLE = 'org.opencontainers.image.title';
export const ANNOTATION_CREATED = 'org.opencontainers.image.created';
export const ANNOTATION_REF_NAME = 'org.opencontainers.image.ref.name';
export const FLIPT_NAMESPACE_ANNOTATION = 'io.flipt.features.namespace';

/** The `Accept` of manifest requests: indexes too, so an index is recognised and refused by name. */
export const MANIFEST_ACCEPT = [OCI_MANIFEST_MEDIA_TYPE, OCI_INDEX_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_LIST_MEDIA_TYPE].join(', ');

const EMPTY_JSON = new TextEncoder().encode('{}');
export const EMPTY_JSON_DIGEST = 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a';
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export function isDigest(text: string): boolean {
  return DIGEST_RE.test(text);
}

/** Thrown for a manifest that is not a readable bundle; the message says which part and why. */
export class BundleFormatError extends Error {
  override readonly name = 'BundleFormatError';
}

export interface BuildBundleOptions {
  readonly manifestVersion: '1.1' | '1.0';
  /** RFC 3339 time, kept in `org.opencontainers.image.created` (injected: builds are reproducible). */
  readonly created: string;
}

/** Same files, version and time → byte-identical manifest (same digest). */
export function buildBundle(files: readonly BundleFile[], opts: BuildBundleOptions): BuiltBundle {
  if (files.length === 0) throw new BundleFormatError('a bundle needs at least one state file');
  const blobs = new Map<string, Uint8Array>();
  blobs.set(EMPTY_JSON_DIGEST, EMPTY_JSON);
  const seen = new Set<string>();
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const layers: Descriptor[] = [];
  for (const file of sorted) {
    const problem = pathProblem(file.path);
    if (problem !== undefined) throw new BundleFormatError(`cannot pack "${file.path}": ${problem}`);
    if (seen.has(file.path)) throw new BundleFormatError(`cannot pack "${file.path}" twice`);
    seen.add(file.path);
    const digest = sha256Digest(file.bytes);
    blobs.set(digest, file.bytes);
    layers.push({
      mediaType: layerMediaTypeFor(file.path),
      digest,
      size: file.bytes.byteLength,
      annotations: { [ANNOTATION_TITLE]: file.path },
    });
  }
  const config: Descriptor =
    opts.manifestVersion === '1.1'
      ? { mediaType: OCI_EMPTY_MEDIA_TYPE, digest: EMPTY_JSON_DIGEST, size: 2, data: 'e30=' }
      : { mediaType: BUNDLE_ARTIFACT_TYPE, digest: EMPTY_JSON_DIGEST, size: 2 };
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    ...(opts.manifestVersion === '1.1' ? { artifactType: BUNDLE_ARTIFACT_TYPE } : {}),
    config,
    layers,
    annotations: { [ANNOTATION_CREATED]: opts.created },
  };
  const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest));
  return { manifest, manifestBytes, manifestDigest: sha256Digest(manifestBytes), blobs };
}

function layerMediaTypeFor(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  const ext = dot < 0 ? '' : base.slice(dot);
  if (ext === '.yml' || ext === '.yaml') return BUNDLE_LAYER_YAML;
  if (ext === '.json' || ext === '') return BUNDLE_LAYER_JSON;
  throw new BundleFormatError(`cannot pack "${path}": only .yml, .yaml and .json state files go into a bundle`);
}

/** Why a layer path cannot be a state-file path, or undefined when it can. */
function pathProblem(path: string): string | undefined {
  if (path === '') return 'the path is empty';
  if (path.startsWith('/')) return 'the path must be relative';
  if (path.includes('\\')) return 'the path must use / as separator';
  if (path.includes('\0')) return 'the path contains a NUL character';
  for (const part of path.split('/')) {
    if (part === '' || part === '.' || part === '..') return 'the path has an empty, "." or ".." component';
  }
  return undefined;
}

/**
 * Parses and checks a bundle manifest. Throws BundleFormatError for an index, a container image,
 * an unknown artifact or layer type, or a missing/ill-typed field.
 */
export function readBundleManifest(bytes: Uint8Array): { manifest: ImageManifest; layers: BundleLayer[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new BundleFormatError(`the manifest is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(raw)) throw new BundleFormatError('the manifest is not a JSON object');
  const mediaType = raw['mediaType'];
  if (mediaType === OCI_INDEX_MEDIA_TYPE || mediaType === DOCKER_MANIFEST_LIST_MEDIA_TYPE || (mediaType === undefined && Array.isArray(raw['manifests']))) {
    throw new BundleFormatError('the reference points at an image index (a list of manifests), not a bundle manifest');
  }
  if (mediaType === DOCKER_MANIFEST_MEDIA_TYPE) {
    throw new BundleFormatError('the reference points at a Docker image manifest, not a bundle (OCI image manifest)');
  }
  if (mediaType !== undefined && mediaType !== OCI_MANIFEST_MEDIA_TYPE) {
    throw new BundleFormatError(`the manifest has media type ${JSON.stringify(mediaType)}, expected ${OCI_MANIFEST_MEDIA_TYPE}`);
  }
  if (raw['schemaVersion'] !== 2) throw new BundleFormatError(`the manifest's schemaVersion is ${JSON.stringify(raw['schemaVersion'])}, expected 2`);
  const config = readDescriptor(raw['config'], 'config');
  if (!Array.isArray(raw['layers'])) throw new BundleFormatError('the manifest has no "layers" array');
  const descriptors = raw['layers'].map((l, i) => readDescriptor(l, `layers[${i}]`));
  const artifactType = raw['artifactType'];
  if (artifactType !== undefined && typeof artifactType !== 'string') throw new BundleFormatError('the manifest\'s "artifactType" is not a string');
  const annotations = readAnnotations(raw['annotations'], 'the manifest');

  const kind = artifactType ?? config.mediaType;
  if (kind === OCI_IMAGE_CONFIG_MEDIA_TYPE) throw new BundleFormatError('the reference points at a container image, not a feature bundle');
  if (kind !== BUNDLE_ARTIFACT_TYPE && kind !== FLIPT_ARTIFACT_TYPE) {
    throw new BundleFormatError(
      `the manifest's artifact type is ${JSON.stringify(kind)}, expected ${BUNDLE_ARTIFACT_TYPE} (or Flipt's ${FLIPT_ARTIFACT_TYPE})`,
    );
  }

  const layers: BundleLayer[] = [];
  const paths = new Set<string>();
  for (const d of descriptors) {
    const path = layerPath(d, paths);
    paths.add(path);
    layers.push({ path, descriptor: d });
  }
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    ...(artifactType !== undefined ? { artifactType } : {}),
    config,
    layers: descriptors,
    ...(annotations !== undefined ? { annotations } : {}),
  };
  return { manifest, layers };
}

/** The manifest's creation time, when annotated. */
export function manifestCreated(manifest: ImageManifest): string | undefined {
  return manifest.annotations?.[ANNOTATION_CREATED];
}

function layerPath(d: Descriptor, taken: ReadonlySet<string>): string {
  const mt = d.mediaType;
  if (mt === BUNDLE_LAYER_YAML || mt === BUNDLE_LAYER_JSON) {
    const title = d.annotations?.[ANNOTATION_TITLE];
    if (title === undefined) throw new BundleFormatError(`layer "${d.digest}": no ${ANNOTATION_TITLE} annotation (the file's path)`);
    const problem = pathProblem(title);
    if (problem !== undefined) throw new BundleFormatError(`layer "${d.digest}": title "${title}": ${problem}`);
    if (taken.has(title)) throw new BundleFormatError(`layer "${d.digest}": title "${title}" is used by another layer`);
    return title;
  }
  if (mt === FLIPT_LAYER_MEDIA_TYPE || mt.startsWith(`${FLIPT_LAYER_MEDIA_TYPE}+`)) {
    const suffix = mt.slice(FLIPT_LAYER_MEDIA_TYPE.length);
    if (suffix !== '' && suffix !== '+json' && suffix !== '+yaml' && suffix !== '+yml') {
      throw new BundleFormatError(`layer "${d.digest}": type "${mt}": unexpected media type`);
    }
    // Flipt reads every layer as one document whatever its title: name it so the default discovery selects it.
    const ext = suffix === '+yaml' || suffix === '+yml' ? 'features.yml' : 'features.json';
    const ns = d.annotations?.[FLIPT_NAMESPACE_ANNOTATION];
    const hex = d.digest.slice('sha256:'.length);
    const stem = ns !== undefined && /^[-_,A-Za-z0-9]+$/.test(ns) ? ns : hex;
    const path = `${stem}.${ext}`;
    return taken.has(path) ? `${stem}-${hex.slice(0, 12)}.${ext}` : path;
  }
  throw new BundleFormatError(`layer "${d.digest}": type "${mt}": unexpected media type`);
}

function readDescriptor(value: unknown, where: string): Descriptor {
  if (!isObject(value)) throw new BundleFormatError(`the manifest's ${where} is missing or not an object`);
  const { mediaType, digest, size } = value;
  if (typeof mediaType !== 'string' || mediaType === '') throw new BundleFormatError(`the manifest's ${where} has no mediaType`);
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest)) {
    throw new BundleFormatError(`the manifest's ${where} digest ${JSON.stringify(digest)} is not sha256:<64 hex digits>`);
  }
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw new BundleFormatError(`the manifest's ${where} size ${JSON.stringify(size)} is not a non-negative integer`);
  }
  const annotations = readAnnotations(value['annotations'], `the manifest's ${where}`);
  const artifactType = value['artifactType'];
  const data = value['data'];
  return {
    mediaType,
    digest,
    size,
    ...(annotations !== undefined ? { annotations } : {}),
    ...(typeof artifactType === 'string' ? { artifactType } : {}),
    ...(typeof data === 'string' ? { data } : {}),
  };
}

function readAnnotations(value: unknown, where: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new BundleFormatError(`${where}'s annotations are not a map of strings`);
  }
  return value as Record<string, string>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
