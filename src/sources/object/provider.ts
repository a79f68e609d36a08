/**
 * What the object-store source needs from a bucket service: list the objects under the configured
 * prefix and download one object as it was listed. One file per provider implements this (s3.ts
 * is the one there is; an Azure Blob or Google Cloud Storage provider would be a sibling file), and
 * from-config.ts picks the provider from `storage.object.type`.
 */

/** One object under the prefix, as the listing reported it. */
export interface ObjectEntry {
  /** Relative to the prefix, `/`-separated, no leading `/`. */
  readonly key: string;
  /** The service's entity tag, without quotes: equal tags mean equal bytes for one key. */
  readonly etag: string;
  readonly size: number;
  /** ISO 8601, when the service reports it. */
  readonly lastModified?: string;
}

export interface ObjectProvider {
  /** `s3`, `azblob`, `googlecloud`. */
  readonly type: string;
  /** Every object under the prefix (all pages), folder markers (keys ending in `/`) left out. */
  list(): Promise<ObjectEntry[]>;
  /**
   * The bytes of `key` if its entity tag is still `etag`; otherwise an ObjectStoreError of kind
   * `changed` (the object was replaced since it was listed) or `not-found` (deleted since).
   * More than `maxBytes` (the listed size) is refused as it arrives, never buffered.
   */
  get(key: string, etag: string, maxBytes?: number): Promise<Uint8Array>;
  /** Where the objects live, for messages (`s3://bucket/prefix`): never a credential. */
  describe(): string;
  close?(): Promise<void>;
}

export type ObjectStoreErrorKind =
  /** The object's entity tag is not the listed one any more. */
  | 'changed'
  | 'not-found'
  | 'no-bucket'
  | 'credentials'
  | 'unreachable'
  | 'other';

/** A provider failure with a message fit for logs and /meta/snapshots (no secrets). */
export class ObjectStoreError extends Error {
  readonly kind: ObjectStoreErrorKind;

  constructor(kind: ObjectStoreErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObjectStoreError';
    this.kind = kind;
  }
}
