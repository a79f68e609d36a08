/**
 * `vexil stale --code DIR`: which flag keys appear in some source file under DIR. One walk of the
 * folder that honours `.gitignore` files at every level (the `ignore` package implements git's
 * pattern rules; a deeper file's match, ignore or negation, wins over a shallower one's), never
 * enters `.git`, never follows symbolic links, and skips the folders given in `skip` and the files
 * in `skipFiles` (the state folder or its files, which name every key). Bounded: at most `maxFiles`
 * files are read (and as many folders listed), a file over `maxFileBytes` is skipped (its size is
 * known before it is read), the scan stops before `maxTotalBytes` would be passed, and a file with
 * a NUL byte in its first 8000 bytes is binary and skipped. When a bound stops the scan, `complete` is
 * false: a key not found may be in a file not read. Matching is linear in the bytes read: each file
 * is split once into tokens of letters, digits, `_` and `-` (and once more with `,` when a key
 * contains one), each looked up in the set of keys; a key counts only as a whole token (`beta` is
 * not found in `beta-access`).
 */
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import ignorePackage, { type Ignore } from 'ignore';

export interface CodeScanOptions {
  readonly root: string;
  readonly keys: ReadonlySet<string>;
  /** Absolute folders not to enter. */
  readonly skip: readonly string[];
  /** Absolute files not to read (the state's own files when the state folder is the root or above it). */
  readonly skipFiles?: readonly string[];
  readonly maxFiles: number;
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
}

export interface CodeScanResult {
  readonly found: Set<string>;
  readonly files: number;
  readonly bytes: number;
  readonly skipped: { tooLarge: number; binary: number; unreadable: number };
  readonly complete: boolean;
  /** The bound that stopped the scan. */
  readonly limit: 'files' | 'bytes' | null;
}

/** A .gitignore larger than this is not read (its patterns are not applied). */
const MAX_GITIGNORE_BYTES = 1024 * 1024;
const BINARY_SNIFF = 8000;
/** The package is CommonJS whose types declare an ES default export: its factory is also `.default` at run time. */
const ignore = ignorePackage.default;

interface Level {
  /** Folder of the .gitignore, relative to the root, `/`-separated ('' for the root). */
  readonly base: string;
  readonly ig: Ignore;
}

export class CodeScanError extends Error {}

export async function scanCode(opts: CodeScanOptions): Promise<CodeScanResult> {
  const st = await lstat(opts.root).catch((err: NodeJS.ErrnoException) => {
    throw new CodeScanError(`cannot read --code folder ${opts.root}: ${err.code ?? err.message}`);
  });
  if (!st.isDirectory()) throw new CodeScanError(`--code ${opts.root} is not a folder`);
  // The root must be listable: an error here is the user's input, not a skipped subfolder.
  await readdir(opts.root).catch((err: NodeJS.ErrnoException) => {
    throw new CodeScanError(`cannot read --code folder ${opts.root}: ${err.code ?? err.message}`);
  });

  const found = new Set<string>();
  const withComma = [...opts.keys].some((k) => k.includes(','));
  const skipped = { tooLarge: 0, binary: 0, unreadable: 0 };
  let files = 0;
  let bytes = 0;
  let limit: 'files' | 'bytes' | null = null;
  const skip = new Set(opts.skip);
  const skipFiles = new Set(opts.skipFiles ?? []);
  const stack: { abs: string; rel: string; levels: readonly Level[] }[] = [{ abs: opts.root, rel: '', levels: [] }];

  let folders = 0;
  walk: while (stack.length > 0) {
    const dir = stack.pop()!;
    // Folders are bounded like files: a tree of empty folders costs a listing each.
    if (++folders > opts.maxFiles) {
      limit = 'files';
      break;
    }
    let entries;
    try {
      entries = await readdir(dir.abs, { withFileTypes: true });
    } catch {
      skipped.unreadable++;
      continue;
    }
    let levels = dir.levels;
    if (entries.some((e) => e.name === '.gitignore' && e.isFile())) {
      const gi = join(dir.abs, '.gitignore');
      const size = (await lstat(gi).catch(() => undefined))?.size ?? Infinity;
      if (size <= MAX_GITIGNORE_BYTES) {
        const text = await readFile(gi, 'utf8').catch(() => undefined);
        if (text !== undefined) levels = [...levels, { base: dir.rel, ig: ignore().add(text) }];
      }
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: typeof stack = [];
    for (const e of entries) {
      if (e.name === '.git' || e.isSymbolicLink()) continue;
      const rel = dir.rel === '' ? e.name : `${dir.rel}/${e.name}`;
      const abs = join(dir.abs, e.name);
      if (e.isDirectory()) {
        if (skip.has(abs) || ignored(levels, rel, true)) continue;
        subdirs.push({ abs, rel, levels });
        continue;
      }
      if (!e.isFile() || skipFiles.has(abs) || ignored(levels, rel, false)) continue;
      if (files >= opts.maxFiles) {
        limit = 'files';
        break walk;
      }
      const read = await readSource(abs, opts.maxFileBytes, opts.maxTotalBytes - bytes);
      if (read === 'unreadable') skipped.unreadable++;
      else if (read === 'too-large') skipped.tooLarge++;
      else if (read === 'over-total') {
        limit = 'bytes';
        break walk;
      } else {
        files++;
        bytes += read.length;
        if (isBinary(read)) skipped.binary++;
        else matchKeys(read.toString('latin1'), opts.keys, found, withComma);
        if (found.size === opts.keys.size) break walk; // every key found: nothing left to learn
      }
    }
    // Depth-first, in name order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
  return { found, files, bytes, skipped, complete: limit === null, limit };
}

/** The deepest .gitignore with a say decides (an ignore or a negation); none: not ignored. */
function ignored(levels: readonly Level[], rel: string, isDir: boolean): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const l = levels[i]!;
    const path = l.base === '' ? rel : relative(l.base, rel).split(sep).join('/');
    let r;
    try {
      r = l.ig.test(isDir ? `${path}/` : path);
    } catch {
      // The package refuses names it cannot take as relative paths (`...`): no pattern of this level applies.
      continue;
    }
    if (r.ignored) return true;
    if (r.unignored) return false;
  }
  return false;
}

async function readSource(abs: string, maxFileBytes: number, remaining: number): Promise<Buffer | 'unreadable' | 'too-large' | 'over-total'> {
  let handle;
  try {
    handle = await open(abs, 'r');
  } catch {
    return 'unreadable';
  }
  try {
    const { size } = await handle.stat();
    if (size > maxFileBytes) return 'too-large';
    if (size > remaining) return 'over-total';
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const { bytesRead } = await handle.read(buf, off, size - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off);
  } catch {
    return 'unreadable';
  } finally {
    await handle.close();
  }
}

function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, BINARY_SNIFF).includes(0);
}

const TOKEN = /[A-Za-z0-9_-]+/g;
const TOKEN_WITH_COMMA = /[A-Za-z0-9_,-]+/g;

/** Adds to `found` every key of `keys` that is a whole token of `text`. */
export function matchKeys(text: string, keys: ReadonlySet<string>, found: Set<string>, withComma = false): void {
  for (const re of withComma ? [TOKEN, TOKEN_WITH_COMMA] : [TOKEN]) {
    for (const m of text.matchAll(re)) {
      const token = m[0];
      if (keys.has(token)) found.add(token);
      else if (token.startsWith('-') || token.endsWith('-')) {
        // `--beta` (a command-line flag), `beta-` (a prefix being joined): the key inside.
        const trimmed = token.replace(/^-+|-+$/g, '');
        if (keys.has(trimmed)) found.add(trimmed);
      }
    }
  }
}
