/**
 * `vexil bundle push TAG REMOTE` and `vexil bundle pull REMOTE`: copy a bundle (manifest, config,
 * layers) between the local store and a registry. Blobs go first and the manifest last, so a
 * registry never holds a manifest whose blobs are missing and a failed pull never tags anything.
 * Progress goes to stderr, one line per blob; the result line to stdout.
 */
import { readBundleManifest } from '../../sources/oci/bundle-format.js';
import type { BundleStore, Descriptor, ImageManifest, OciReference, RegistryClient } from '../../sources/oci/types.js';
import { RegistryError } from '../../sources/oci/types.js';
import type { CliIO } from '../io.js';
import { formatSize, shortDigest } from './format.js';
import { bundleNameOf } from '../../sources/oci/source.js';
import { storeNameCandidates } from './names.js';

/** A bundle's blobs in push/pull order: config, then layers; each digest once. */
function blobsOf(manifest: ImageManifest): Descriptor[] {
  const seen = new Set<string>();
  return [manifest.config, ...manifest.layers].filter((d) => !seen.has(d.digest) && seen.add(d.digest));
}

function progressLine(i: number, n: number, d: Descriptor, what: string): string {
  return `  [${i}/${n}] ${shortDigest(d.digest)} ${formatSize(d.size)}: ${what}\n`;
}

export class UnknownBundleError extends Error {}

export interface PushOptions {
  /** Local-store name as typed. */
  readonly name: string;
  readonly remote: OciReference;
  /** REMOTE as shown in messages (no scheme, no credentials). */
  readonly remoteText: string;
  readonly store: BundleStore;
  readonly client: RegistryClient;
}

export async function pushCommand(opts: PushOptions, io: CliIO): Promise<number> {
  let name: string | undefined;
  let digest: string | undefined;
  for (const candidate of storeNameCandidates(opts.name)) {
    digest = await opts.store.resolve(candidate);
    if (digest !== undefined) {
      name = candidate;
      break;
    }
  }
  if (digest === undefined || name === undefined) {
    throw new UnknownBundleError(`bundle "${opts.name}" not found in ${opts.store.dir} (see "vexil bundle list")`);
  }
  const manifestBytes = await opts.store.readBlob(digest);
  const { manifest } = readBundleManifest(manifestBytes);
  const blobs = blobsOf(manifest);
  const total = blobs.reduce((n, d) => n + d.size, manifestBytes.byteLength);
  io.stderr(`pushing ${name} (${shortDigest(digest)}) to ${opts.remoteText}: ${blobs.length} blobs, ${formatSize(total)}\n`);

  for (const [i, d] of blobs.entries()) {
    if (await opts.client.hasBlob(opts.remote, d.digest)) {
      io.stderr(progressLine(i + 1, blobs.length, d, 'already in the registry'));
      continue;
    }
    await opts.client.pushBlob(opts.remote, d.digest, await opts.store.readBlob(d.digest));
    io.stderr(progressLine(i + 1, blobs.length, d, 'pushed'));
  }
  const pushed = await opts.client.pushManifest(opts.remote, manifestBytes, manifest.mediaType);
  if (pushed !== digest) {
    throw new RegistryError('digest-mismatch', `the registry stored the manifest as ${pushed}, expected ${digest}`);
  }
  io.stderr(`  manifest ${shortDigest(digest)} ${formatSize(manifestBytes.byteLength)}: pushed\n`);
  io.stdout(`pushed ${opts.remoteText} ${digest}\n`);
  return 0;
}

export interface PullOptions {
  readonly remote: OciReference;
  readonly store: BundleStore;
  readonly client: RegistryClient;
}

export async function pullCommand(opts: PullOptions, io: CliIO): Promise<number> {
  const name = bundleNameOf(opts.remote);
  io.stderr(`pulling ${name}\n`);
  const { digest, bytes } = await opts.client.getManifest(opts.remote);
  // Refuses what is not a bundle (an image, an unknown layer type) before any blob is fetched.
  const { manifest } = readBundleManifest(bytes);
  const blobs = blobsOf(manifest);
  const total = blobs.reduce((n, d) => n + d.size, bytes.byteLength);
  io.stderr(`  manifest ${shortDigest(digest)}: ${blobs.length} blobs, ${formatSize(total)}\n`);

  for (const [i, d] of blobs.entries()) {
    if (await opts.store.hasBlob(d.digest)) {
      io.stderr(progressLine(i + 1, blobs.length, d, 'already in the local store'));
      continue;
    }
    const blob = await opts.client.getBlob(opts.remote, d);
    const written = await opts.store.writeBlob(blob);
    if (written !== d.digest) throw new RegistryError('digest-mismatch', `blob ${d.digest} has digest ${written}`);
    io.stderr(progressLine(i + 1, blobs.length, d, 'pulled, verified'));
  }
  const stored = await opts.store.tag(name, bytes);
  if (stored !== digest) throw new RegistryError('digest-mismatch', `manifest ${digest} was stored as ${stored}`);
  io.stdout(`pulled ${name} ${digest}\n`);
  return 0;
}
