/**
 * `vexil bundle build [--dir PATH] NAME[:TAG]`: validates the folder's state exactly as
 * `vexil validate` / `vexil serve` read it, and only when it has no error packs the index file and
 * the selected state files into a bundle in the local store. The bytes packed are the bytes that
 * were validated (each file is read once), so an edit racing the build cannot slip in unchecked.
 */
import { resolve } from 'node:path';
import { openBundleStore } from '../../sources/oci/bundle-store.js';
import { buildBundle } from '../../sources/oci/bundle-format.js';
import type { BundleFile } from '../../sources/oci/types.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../sources/local.js';
import { readState } from '../../store/read-state.js';
import type { FileSet, SourceFile } from '../../sources/types.js';
import { INDEX_FILE_NAMES } from '../../state/load.js';
import { countSummary, formatText } from '../format-problems.js';
import type { CliIO } from '../io.js';
import { displayDir, displayPath } from '../local-state.js';
import { formatSize } from './format.js';
import type { ManifestVersion } from './settings.js';

export interface BuildOptions {
  /** State folder as given (relative to io.cwd). */
  readonly dir: string;
  /** `name:tag` in the local store. */
  readonly name: string;
  readonly bundlesDir: string;
  readonly manifestVersion: ManifestVersion;
  readonly maxFileSize: number;
  readonly maxStateSize: number;
  /** RFC 3339; recorded as the manifest's org.opencontainers.image.created. */
  readonly created: string;
}

export async function buildCommand(opts: BuildOptions, io: CliIO): Promise<number> {
  const display = displayDir(opts.dir);
  const source = createLocalSource({ path: resolve(io.cwd, opts.dir), maxFileSize: opts.maxFileSize, maxStateSize: opts.maxStateSize });
  const rev = (await source.refs()).get(LOCAL_REFERENCE);
  if (rev === undefined) throw new Error(`no state in ${display}`);
  const fileSet = readOnce(await source.files(rev));
  const result = await readState(fileSet, { reference: LOCAL_REFERENCE, maxFileSize: opts.maxFileSize, maxStateSize: opts.maxStateSize, testContexts: false, policy: false });

  const problems = result.problems.map((p) => ({ ...p, file: displayPath(display, p.file) }));
  if (problems.length > 0) {
    const lines = new Map<string, string[]>();
    for (const p of problems) {
      if (p.line <= 0 || lines.has(p.file)) continue;
      const f = fileSet.files.find((x) => displayPath(display, x.path) === p.file);
      const text = f === undefined ? undefined : await f.bytes().then((b) => new TextDecoder().decode(b), () => undefined);
      if (text !== undefined) lines.set(p.file, text.split(/\r?\n/));
    }
    if (result.snapshot === undefined) {
      io.stderr(`vexil: the state in ${display} is invalid (${countSummary(problems)}); no bundle built\n`);
    }
    io.stderr(formatText(problems, (f) => lines.get(f)));
  }
  if (result.snapshot === undefined) return 1;
  if (result.files.length === 0) {
    io.stderr(`vexil: no state files in ${display}; no bundle built\n`);
    return 1;
  }

  const index = INDEX_FILE_NAMES.find((name) => fileSet.files.some((f) => f.path === name));
  const paths = [...(index !== undefined ? [index] : []), ...result.files];
  const files: BundleFile[] = [];
  for (const path of paths) {
    const f = fileSet.files.find((x) => x.path === path)!;
    files.push({ path, bytes: await f.bytes() });
  }

  const built = buildBundle(files, { manifestVersion: opts.manifestVersion, created: opts.created });
  const store = await openBundleStore(opts.bundlesDir);
  for (const [digest, bytes] of built.blobs) {
    const written = await store.writeBlob(bytes);
    if (written !== digest) throw new Error(`bundle blob ${digest} was stored as ${written}`);
  }
  const digest = await store.tag(opts.name, built.manifestBytes);
  let size = built.manifestBytes.byteLength;
  for (const bytes of built.blobs.values()) size += bytes.byteLength;
  const noun = files.length === 1 ? 'file' : 'files';
  io.stdout(`built ${opts.name} ${digest} (${files.length} ${noun}, ${formatSize(size)})\n`);
  return 0;
}

/** The same files, each read from disk at most once: later reads get the bytes first read. */
function readOnce(fileSet: FileSet): FileSet {
  return {
    revision: fileSet.revision,
    files: fileSet.files.map((f): SourceFile => {
      let bytes: Promise<Uint8Array> | undefined;
      return {
        path: f.path,
        contentId: f.contentId,
        ...(f.size !== undefined ? { size: f.size } : {}),
        bytes: () => (bytes ??= f.bytes()),
      };
    }),
  };
}
