/**
 * Contracts shared by the OCI pieces (written before them, so the source, the bundle store and
 * `vexil bundle` can be built side by side):
 * - reference.ts       parseOciReference(): `[http(s)://]host[:port]/name[:tag|@digest]` → OciReference
 * - bundle-format.ts   buildBundle() / readBundleManifest(): the bundle's manifest, config and layers
 * - registry-client.ts createRegistryClient(): the distribution API on Node's fetch
 * - bundle-store.ts    openBundleStore(): the local bundle directory (an OCI image layout)
 */

/** An OCI content descriptor (image-spec descriptor.md). */
export interface Descriptor {
  readonly mediaType: string;
  /** `sha256:<64 hex>`. */
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly artifactType?: string;
  /** Base64 of the content, for tiny blobs (the OCI 1.1 empty config). */
  readonly data?: string;
}

/** An OCI image manifest (application/vnd.oci.image.manifest.v1+json). */
export interface ImageManifest {
  readonly schemaVersion: 2;
  readonly mediaType: string;
  readonly artifactType?: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A parsed `storage.oci.repository` or `vexil bundle push/pull` REMOTE. */
export interface OciReference {
  /** `https` unless written `http://` or made insecure. */
  readonly scheme: 'https' | 'http';
  /** `host[:port]`. */
  readonly registry: string;
  /** Repository name, e.g. `team/flags`. */
  readonly repository: string;
  /** Exactly one of tag and digest is set (tag defaults to `latest`). */
  readonly tag?: string;
  readonly digest?: string;
}

/** Credentials answered to the registry's WWW-Authenticate challenge. */
export interface RegistryCredentials {
  readonly username?: string;
  readonly password?: string;
  /** Read before every operation (rotating credentials); used as the password, or as a Bearer token without a username. */
  readonly tokenFile?: string;
}

/** A bundle's state files in memory: what `vexil bundle build` packs and what the source serves. */
export interface BundleFile {
  /** Path relative to the state root, `/`-separated (kept in `org.opencontainers.image.title`). */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** A manifest plus the blobs it references, ready to store or push (config first, then layers). */
export interface BuiltBundle {
  readonly manifest: ImageManifest;
  /** The exact manifest bytes (its digest is the bundle's digest). */
  readonly manifestBytes: Uint8Array;
  readonly manifestDigest: string;
  readonly blobs: ReadonlyMap<string, Uint8Array>;
}

/** One state-file layer of a manifest, as read: where it goes and which blob holds it. */
export interface BundleLayer {
  readonly path: string;
  readonly descriptor: Descriptor;
}

/** Failure talking to a registry: `kind` lets the CLI and the source word it (and pick exit codes). */
export class RegistryError extends Error {
  constructor(
    readonly kind: 'unauthorized' | 'denied' | 'not-found' | 'unreachable' | 'invalid' | 'digest-mismatch' | 'server',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

export interface RegistryClient {
  /** HEAD the manifest of ref's tag or digest: its digest, or undefined when it does not exist. One request (plus auth). */
  resolve(ref: OciReference): Promise<{ digest: string; mediaType: string; size: number } | undefined>;
  /** GET a manifest by tag or digest (digest verified). Throws RegistryError not-found when missing. */
  getManifest(ref: OciReference): Promise<{ digest: string; bytes: Uint8Array; manifest: ImageManifest }>;
  /** GET a blob, verified against the descriptor's digest and size. */
  getBlob(ref: OciReference, descriptor: Descriptor): Promise<Uint8Array>;
  hasBlob(ref: OciReference, digest: string): Promise<boolean>;
  /** POST + PUT upload (skipped by callers when hasBlob). */
  pushBlob(ref: OciReference, digest: string, bytes: Uint8Array): Promise<void>;
  /** PUT the manifest under ref's tag (or digest); returns the registry's digest. */
  pushManifest(ref: OciReference, bytes: Uint8Array, mediaType: string): Promise<string>;
  listTags(ref: OciReference): Promise<string[]>;
}

/** One tagged bundle in the local bundle store. */
export interface StoredBundle {
  /** `repository:tag` as given to build/pull (e.g. `flags:v1`, `127.0.0.1:5000/team/flags:v1`). */
  readonly name: string;
  readonly digest: string;
  /** From the manifest's org.opencontainers.image.created annotation. */
  readonly created?: string;
  readonly size: number;
}

/** The local bundle directory: an OCI image layout (oci-layout, index.json, blobs/sha256/...). */
export interface BundleStore {
  readonly dir: string;
  hasBlob(digest: string): Promise<boolean>;
  /** Verified read (digest of the bytes re-checked). */
  readBlob(digest: string): Promise<Uint8Array>;
  /** Written atomically (temp file + rename); returns the digest. */
  writeBlob(bytes: Uint8Array): Promise<string>;
  /** Stores the manifest blob and points `name` at it in index.json (replacing an older one). */
  tag(name: string, manifestBytes: Uint8Array): Promise<string>;
  /** Manifest digest of a name, undefined when absent. */
  resolve(name: string): Promise<string | undefined>;
  list(): Promise<StoredBundle[]>;
}
