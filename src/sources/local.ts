/**
 * The local-folder backend: one reference (`local`), whose revision is a content hash of the
 * folder's files, and a chokidar watcher that tells the store when something changed.
 *
 * Safety rules: a symlink is followed only when its target stays inside the state root (checked
 * on real paths); a file over `maxFileSize` is never read; `.git` and `node_modules` are skipped.
 * Refused files are still listed, so that when the index selects one the reader reports a located
 * problem instead of silently dropping its flags.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants, realpathSync, type Dirent } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { extname, join, relative, resolve, sep } from 'node:path';
import { watch as chokidarWatch } from 'chokidar';
import { FileRefusedError, tooLarge } from './file-refused.js';
import type { FileSet, Revision, Source, SourceFile } from './types.js';

/** The only reference a local folder has. */
export const LOCAL_REFERENCE = 'local';

export interface LocalSourceOptions {
  /** The state folder. */
  readonly path: string;
  /** `storage.max_file_size`: files larger than this many bytes are not read. */
  readonly maxFileSize: number;
  /**
   * Once a scan has read this many bytes, further files are only stat'ed (the store then refuses
   * the revision from their sizes: `storage.max_state_size`).
   */
  readonly maxStateSize: number;
}

export interface LocalSource extends Source {
  readonly kind: 'local';
  /** The folder as given. */
  readonly path: string;
}

/** Directory names never descended into. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);
/** Extensions whose bytes can reach the loader; other files are listed but hashed by size only. */
const LOADABLE_EXTENSIONS = new Set(['.yml', '.yaml', '.json', '']);
const READ_CONCURRENCY = 16;
/** A state file modified more recently than this may still be being written (see scan()). */
const SETTLE_MS = 50;
const MAX_SETTLE_ATTEMPTS = 5;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);

interface Scan {
  readonly revision: Revision;
  readonly files: readonly SourceFile[];
}

interface Entry {
  readonly path: string;
  /** Real path to open (no symlink in it). */
  readonly realPath?: string;
  readonly size?: number;
  readonly refused?: FileRefusedError;
}

export function createLocalSource(opts: LocalSourceOptions): LocalSource {
  const { maxFileSize, maxStateSize } = opts;
  let last: Scan | undefined;

  async function scan(): Promise<Scan> {
    let files: SourceFile[] = [];
    // A file written in place is empty or partial for a moment (truncate, then write), and such a
    // partial file may still be valid. Any write moves the mtime, so a file modified within the
    // last SETTLE_MS may be mid-write: wait until it is that old and read again (as chokidar's
    // awaitWriteFinish does), a bounded number of times so a file rewritten nonstop still loads.
    for (let attempt = 0; ; attempt++) {
      const root = await resolveRoot(opts.path);
      const entries = await walk(root);
      let youngest = 0;
      const budget = { left: maxStateSize };
      files = await mapLimit(entries, READ_CONCURRENCY, async (e) => {
        const read = await toSourceFile(e, maxFileSize, budget);
        if (read.mtimeMs > youngest) youngest = read.mtimeMs;
        return read.file;
      });
      const age = Date.now() - youngest;
      if (age >= SETTLE_MS || attempt >= MAX_SETTLE_ATTEMPTS) break;
      await sleep(SETTLE_MS - Math.max(age, 0));
    }
    const hash = createHash('sha256');
    for (const f of files) hash.update(`${f.path}\0${f.contentId}\n`);
    const revision: Revision = { id: hash.digest('hex').slice(0, 40), ref: LOCAL_REFERENCE };
    last = { revision, files };
    return last;
  }

  return {
    kind: 'local',
    path: opts.path,
    async refs() {
      const s = await scan();
      return new Map([[LOCAL_REFERENCE, s.revision]]);
    },
    /**
     * A folder has no history: the files are always the current ones. When `rev` is the revision
     * the last `refs()` saw, the bytes read then are returned (so revision and bytes agree);
     * otherwise the folder is read again and the FileSet carries the revision actually read.
     */
    async files(rev: Revision): Promise<FileSet> {
      if (rev.ref !== LOCAL_REFERENCE) throw new Error(`reference "${rev.ref}" not found`);
      const s = last !== undefined && last.revision.id === rev.id ? last : await scan();
      return { revision: s.revision, files: s.files };
    },
    watch(onChange: () => void) {
      // The real folder: chokidar does not descend into a root given as a symlink.
      let watched = resolve(opts.path);
      try {
        watched = realpathSync(watched);
      } catch {
        // missing now: watch the path as given; refs() reports the problem
      }
      const watcher = chokidarWatch(watched, {
        ignoreInitial: true,
        followSymlinks: false,
        ignored: (p: string) =>
          relative(watched, resolve(p))
            .split(sep)
            .some((part) => SKIPPED_DIRS.has(part)),
      });
      watcher.on('all', () => onChange());
      // chokidar drops a file's `change` arriving within 50 ms of the previous one, which would
      // lose the last of two quick saves; raw fs events are not throttled. Extra calls are cheap:
      // the store compares revisions and does nothing when the content is unchanged.
      watcher.on('raw', () => onChange());
      // Anything that changed between the caller's last scan and the watcher being armed would
      // otherwise go unnoticed: one extra (cheap, revision-compared) look settles it.
      watcher.on('ready', () => onChange());
      watcher.on('error', () => onChange());
      return () => watcher.close();
    },
  };
}

async function resolveRoot(path: string): Promise<string> {
  let root: string;
  let st;
  try {
    root = await realpath(path);
    st = await stat(root);
  } catch {
    // Also when it vanishes between the two calls (a folder being removed or replaced).
    throw new Error(`state folder "${path}" does not exist`);
  }
  if (!st.isDirectory()) throw new Error(`state folder "${path}" is not a directory`);
  return root;
}

function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Every file under `root`, sorted by relative path (byte order), symlinks checked. */
async function walk(root: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const visited = new Set<string>([root]);

  async function visit(dirReal: string, relDir: string): Promise<void> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(dirReal, { withFileTypes: true });
    } catch {
      return; // vanished or unreadable while walking: the next change event rescans
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      const rel = relDir === '' ? d.name : `${relDir}/${d.name}`;
      const abs = join(dirReal, d.name);
      if (d.isDirectory()) {
        if (SKIPPED_DIRS.has(d.name)) continue;
        await visit(abs, rel);
      } else if (d.isFile()) {
        out.push({ path: rel, realPath: abs });
      } else if (d.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(abs);
        } catch {
          out.push({
            path: rel,
            refused: new FileRefusedError('file.unreadable', `${rel} is a symlink to a missing file`, 'fix or remove the link'),
          });
          continue;
        }
        if (!isInside(root, target)) {
          out.push({
            path: rel,
            refused: new FileRefusedError(
              'file.symlink-outside-root',
              `${rel} is a symlink to ${target}, outside the state folder; it is not read`,
              'copy the file into the state folder instead of linking to it',
            ),
          });
          continue;
        }
        const st = await stat(target).catch(() => undefined);
        if (st === undefined) continue;
        if (st.isDirectory()) {
          if (SKIPPED_DIRS.has(d.name) || visited.has(target)) continue; // skip cycles
          visited.add(target);
          await visit(target, rel);
        } else if (st.isFile()) {
          out.push({ path: rel, realPath: target });
        }
      }
    }
  }

  await visit(root, '');
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

/**
 * Loadable files are read now (their bytes define the revision and are served from memory, so a
 * FileSet never mixes two versions of a file); other files are only stat'ed and read on demand,
 * and so are loadable ones once the scan has read `budget.left` bytes (the state is over
 * `storage.max_state_size` then: the store refuses it from the sizes, reading nothing more).
 */
async function toSourceFile(e: Entry, maxFileSize: number, budget: { left: number }): Promise<{ file: SourceFile; mtimeMs: number }> {
  const { path } = e;
  if (e.refused !== undefined) {
    const err = e.refused;
    return { file: { path, contentId: `refused:${err.rule}`, bytes: () => Promise.reject(err) }, mtimeMs: 0 };
  }
  const realPath = e.realPath as string;
  if (!LOADABLE_EXTENSIONS.has(extname(path).toLowerCase()) || budget.left < 0) {
    const st = await stat(realPath).catch(() => undefined);
    const size = st?.size ?? 0;
    const file: SourceFile = {
      path,
      size,
      contentId: `stat:${size}:${st?.mtimeMs ?? 0}`,
      bytes: () => readLimited(path, realPath, maxFileSize).then((r) => r.bytes),
    };
    return { file, mtimeMs: 0 };
  }
  try {
    const { bytes, mtimeMs } = await readLimited(path, realPath, maxFileSize);
    budget.left -= bytes.byteLength;
    const contentId = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    return { file: { path, size: bytes.byteLength, contentId, bytes: () => Promise.resolve(bytes) }, mtimeMs };
  } catch (err) {
    const refused =
      err instanceof FileRefusedError
        ? err
        : new FileRefusedError('file.unreadable', `${path} could not be read: ${(err as Error).message}`);
    const size = err instanceof FileRefusedError ? await stat(realPath).then((s) => s.size, () => undefined) : undefined;
    const file: SourceFile = {
      path,
      ...(size !== undefined ? { size } : {}),
      contentId: `refused:${refused.rule}:${size ?? ''}`,
      bytes: () => Promise.reject(refused),
    };
    return { file, mtimeMs: 0 };
  }
}

async function readLimited(
  path: string,
  realPath: string,
  maxFileSize: number,
): Promise<{ bytes: Uint8Array; mtimeMs: number }> {
  const fh = await open(realPath, OPEN_FLAGS);
  try {
    const st = await fh.stat();
    if (st.size > maxFileSize) throw tooLarge(path, st.size, maxFileSize);
    const buf = await fh.readFile();
    if (buf.byteLength > maxFileSize) throw tooLarge(path, buf.byteLength, maxFileSize);
    // Stat again after the read: a truncate that raced the read shows up as a fresh mtime.
    const after = await fh.stat();
    return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), mtimeMs: Math.max(st.mtimeMs, after.mtimeMs) };
  } finally {
    await fh.close();
  }
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

