/**
 * The Git backend: every branch and tag of a repository (and any full commit id), read straight
 * from a Git object database without a work tree.
 *
 * - An http(s) repository is mirrored into one bare repository under `cacheDir` (reused across
 *   restarts). `refs()` is one request to the server when nothing changed (see ls-refs.ts); the
 *   objects of a ref are fetched only when a build needs a commit the mirror lacks, so a poll
 *   fetches exactly the refs that moved and are served.
 * - A local repository path is read in place: refs from its ref store, objects from its packs.
 * - `files(rev)` lists the tree of the commit under `directory`; a file's content id is its blob
 *   id, so branches sharing a file share its parsed document.
 * - Revisions carry the commit's author, message and time, shown for rejected commits.
 * - `history(commit, path, limit)` walks a served commit's first-parent chain for the commits that
 *   changed one state file (history.ts), from the local copy only: a parent it lacks ends the walk.
 * - A read from the mirror that fails for a reason other than the content (a file too large, a
 *   missing directory) has the mirror checked for damage (mirror.ts); when it was damaged it is
 *   replaced by an empty one, the commit fetched again and the read made once more. A read that
 *   still cannot be made is a backend failure (SourceReadError), never a problem on the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { GitAuthFileError, authHeaders, hasCredentials, type GitAuth } from './auth.js';
import { atomicFs } from './atomic-fs.js';
import { GitServerError, redactUrl } from './errors.js';
import { createGitHttpClient, GitTransportError, type GitHttpClient } from './http-client.js';
import { createRefLister, type RemoteRef } from './ls-refs.js';
import { listLocalRefs, openMirror, type Mirror } from './mirror.js';
import type { ObjectDb } from './object-db.js';
import { DirectoryMissingError, hasCommit, listFiles, normalizeDirectory, ObjectTooLargeError, peel, revisionMeta } from './objects.js';
import { parseRepository, privateDefaultCacheDir, type RepositoryLocation } from './options.js';
import { isCommitId, referenceNames, type ListedRef } from './ref-names.js';
import { FileRefusedError } from '../file-refused.js';
import { SourceReadError } from '../source-read-error.js';
import type { FileHistory, FileSet, Revision, Source, SourceLogger } from '../types.js';
import { repositoryDirs } from './repository-dirs.js';
import { fileHistory } from './history.js';

export { GitOptionsError, parseRepository } from './options.js';

export interface GitSourceOptions {
  /** An http(s) URL or a local repository path (SSH is refused: GitOptionsError). */
  readonly repository: string;
  /** `storage.git.ref`, the default reference: its commit is what a new ref's fetch says we already have. */
  readonly ref: string;
  /** Sub-folder holding the state. */
  readonly directory?: string;
  /** Where the bare mirror lives (http(s) repositories only). */
  readonly cacheDir?: string;
  readonly auth?: GitAuth;
  readonly insecureSkipTls?: boolean;
  /** PEM file of extra certificate authorities. */
  readonly caCertPath?: string;
  /** A request to the server fails after this long without data (default 30 s). */
  readonly idleTimeoutMs?: number;
  /** The mirror is compacted (fetched whole again) when it holds more pack files than this (default 40). */
  readonly maxPacks?: number;
  /** `storage.max_file_size`: no object larger is inflated (a larger file is a located problem). */
  readonly maxFileSize: number;
  /** `storage.git.max_fetch_size`: bytes one fetch may receive. */
  readonly maxFetchSize: number;
  /** Where a damaged cache found and replaced is reported. */
  readonly logger?: SourceLogger;
}

export interface GitSourceStats {
  /** HTTP requests sent to the server (listings, fetches, redirects, retries). */
  readonly requests: number;
  readonly bytesReceived: number;
  /** Fetch exchanges (each is two requests: advertisement + pack). */
  readonly fetches: number;
  /** refs() calls answered. */
  readonly listings: number;
  /** Protocol the server answered the last listing with (0: not asked yet). */
  readonly protocolVersion: 0 | 1 | 2;
}

export interface GitSource extends Source {
  readonly kind: 'git';
  /** The repository as configured, without credentials. */
  readonly repository: string;
  /** A full commit id not named by any ref listing: its revision, or undefined when the server has no such commit. */
  lookup(name: string): Promise<Revision | undefined>;
  /** Makes the commits of `revs` local in as few exchanges as possible (one when several are missing). */
  prefetch(revs: readonly Revision[]): Promise<void>;
  /** The refs as the local copy last saw them (a restart while the server is down serves these). */
  cachedRefs(): Promise<Map<string, Revision>>;
  /** The commits of the first-parent history of `revisionId` (at most `limit`) that changed `path`. */
  history(revisionId: string, path: string, limit: number): Promise<FileHistory>;
  stats(): GitSourceStats;
}

export function createGitSource(opts: GitSourceOptions): GitSource {
  const location: RepositoryLocation = parseRepository(opts.repository);
  const directory = normalizeDirectory(opts.directory);
  const defaultRef = opts.ref;
  if (location.kind === 'path') return pathSource(location.path, opts, directory);
  // user:password in the URL is basic auth (never kept in the URL: it would end up in logs).
  const withAuth = opts.auth === undefined && location.basic !== undefined ? { ...opts, auth: { basic: location.basic } } : opts;
  return httpSource(location.url, withAuth, directory, defaultRef);
}

function toRevisions(listed: Map<string, ListedRef>): Map<string, Revision> {
  const out = new Map<string, Revision>();
  for (const [name, r] of listed) out.set(name, { id: r.commit, ref: name });
  return out;
}

async function fileSet(db: ObjectDb, rev: Revision, directory: string, maxFileSize: number): Promise<FileSet> {
  const meta = await revisionMeta(db, rev.id);
  const files = await listFiles(db, rev.id, directory, maxFileSize);
  return { revision: { id: rev.id, ref: rev.ref, meta }, files };
}

function httpSource(url: string, opts: GitSourceOptions, directory: string, defaultRef: string): GitSource {
  const auth = opts.auth;
  const withCredentials = hasCredentials(auth);
  const http: GitHttpClient = createGitHttpClient({
    ...(opts.insecureSkipTls !== undefined ? { insecureSkipTls: opts.insecureSkipTls } : {}),
    ...(opts.caCertPath !== undefined ? { caPem: readFileSync(opts.caCertPath, 'utf8') } : {}),
    ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
  });
  const headers = () => authHeaders(auth);
  const lister = createRefLister({ url, http, headers, hasCredentials: withCredentials });
  const cacheDir = opts.cacheDir ?? privateDefaultCacheDir();
  let mirrorP: Promise<Mirror> | undefined;
  let opened: Mirror | undefined;
  const mirror = () => {
    mirrorP ??= openMirror({
      cacheDir,
      url,
      http,
      headers,
      hasCredentials: withCredentials,
      ...(opts.maxPacks !== undefined ? { maxPacks: opts.maxPacks } : {}),
      maxFetchSize: opts.maxFetchSize,
      ...(opts.logger !== undefined ? { logger: opts.logger } : {}),
    }).then(
      (m) => (opened = m),
      (err: unknown) => {
        mirrorP = undefined;
        throw err;
      },
    );
    return mirrorP;
  };

  let listed = new Map<string, ListedRef>();
  let listing: RemoteRef[] = [];
  /** Fingerprint of the listing a fetch of everything was last made for (commit-id lookups). */
  let fetchedAllFor: string | undefined;
  let listings = 0;

  const fingerprint = () => listing.map((r) => `${r.name} ${r.oid}`).join('\n');
  const defaultHave = () => listed.get(defaultRef)?.fullName ?? `refs/heads/${defaultRef}`;

  async function fetchFor(rev: Revision): Promise<void> {
    const m = await mirror();
    const target = listed.get(rev.ref);
    if (target !== undefined) await m.fetchOne({ name: target.fullName, oid: target.oid }, defaultHave());
    else await fetchEverything(m);
  }

  /**
   * Runs `read` on the mirror. When it fails for a reason the content does not explain and the
   * mirror turns out damaged (it is then replaced by an empty one), `refetch` brings the commit
   * back and the read is made again. Concurrent reads share one check; a read that failed on the
   * mirror replaced meanwhile just retries.
   */
  async function withRepair<T>(m: Mirror, what: string, read: () => Promise<T>, refetch: () => Promise<void>): Promise<T> {
    const seen = m.generation;
    try {
      return await read();
    } catch (err) {
      if (!mayBeCacheDamage(err)) throw err;
      const repaired = m.generation !== seen || (await m.repairIfDamaged(`${what}: ${err instanceof Error ? err.message : String(err)}`));
      if (!repaired) throw err;
      fetchedAllFor = undefined;
      try {
        await refetch();
        return await read();
      } catch (again) {
        if (again instanceof FileRefusedError || again instanceof DirectoryMissingError || again instanceof ObjectTooLargeError) throw again;
        const why = again instanceof Error ? again.message : String(again);
        throw new SourceReadError(`${what} failed after the damaged git cache was replaced: ${why}`, { cause: again });
      }
    }
  }

  /** The commit of `rev` in the mirror, fetched when missing. */
  async function ensureCommit(m: Mirror, rev: Revision): Promise<void> {
    if (!(await hasCommit(m, rev.id))) await fetchFor(rev);
    if (!(await hasCommit(m, rev.id))) throw new Error(`commit ${rev.id} of reference "${rev.ref}" is not on the git server any more`);
  }

  async function readRevision(m: Mirror, rev: Revision): Promise<FileSet> {
    let revision = rev;
    if (!(await hasCommit(m, rev.id))) {
      await fetchFor(rev);
      // The fetch brought the branch's tip as the server has it now, which may be newer than
      // the listing `rev` came from (a request for a branch not built since the last poll).
      const target = listed.get(rev.ref);
      const tip = target !== undefined ? await resolveLocal(m, target.fullName) : undefined;
      if (tip !== undefined && tip !== rev.id && (await hasCommit(m, tip))) revision = { id: tip, ref: rev.ref };
      else if (!(await hasCommit(m, rev.id))) {
        throw new Error(`commit ${rev.id} of reference "${rev.ref}" is not on the git server any more`);
      }
    }
    const set = await fileSet(m, revision, directory, opts.maxFileSize);
    const at = set.revision;
    return {
      ...set,
      files: set.files.map((f) => ({
        ...f,
        bytes: () => withRepair(m, `reading ${f.path} at commit ${at.id}`, () => f.bytes(), () => ensureCommit(m, at)),
      })),
    };
  }

  async function fetchEverything(m: Mirror): Promise<void> {
    const fp = fingerprint();
    if (fetchedAllFor === fp) return;
    const anyRef = listed.get(defaultRef)?.fullName ?? listing[0]?.name;
    if (anyRef === undefined) return;
    await m.fetchAll(true, anyRef);
    fetchedAllFor = fp;
  }

  return {
    kind: 'git',
    repository: redactUrl(url),
    async refs() {
      const before = fingerprint();
      listing = await lister.list();
      listings++;
      listed = referenceNames(listing);
      // An empty listing is never taken as "every branch was deleted" by the local copy either.
      if (mirrorP !== undefined && fingerprint() !== before && listing.length > 0) {
        // Keep the local copy honest for a restart while the server is down; best effort.
        await (await mirror()).prune(listing).catch(() => {});
      }
      return toRevisions(listed);
    },
    async files(rev) {
      const m = await mirror();
      // readRevision fetches what the (replaced) mirror lacks itself.
      return withRepair(m, `reading commit ${rev.id}`, () => readRevision(m, rev), async () => {});
    },
    async lookup(name) {
      if (!isCommitId(name)) return undefined;
      const m = await mirror();
      if (!(await hasCommit(m, name))) {
        if (listing.length === 0) {
          listing = await lister.list();
          listed = referenceNames(listing);
        }
        await fetchEverything(m);
        if (!(await hasCommit(m, name))) return undefined;
      }
      return { id: name, ref: name };
    },
    async prefetch(revs) {
      const m = await mirror();
      const missing: Revision[] = [];
      for (const r of revs) if (listed.has(r.ref) && !(await hasCommit(m, r.id))) missing.push(r);
      if (missing.length === 0) return;
      if (missing.length === 1) return fetchFor(missing[0]!);
      const tags = missing.some((r) => listed.get(r.ref)?.fullName.startsWith('refs/tags/') === true);
      const anyRef = listed.get(missing[0]!.ref)!.fullName;
      await m.fetchAll(tags, anyRef);
    },
    async history(revisionId, path, limit) {
      const m = await mirror();
      return fileHistory(m, revisionId, directory, path, limit, opts.maxFileSize);
    },
    async cachedRefs() {
      const m = await mirror();
      return toRevisions(referenceNames(await m.localRefs()));
    },
    stats() {
      return {
        requests: http.stats.requests,
        bytesReceived: http.stats.bytesReceived,
        fetches: opened?.fetches ?? 0,
        listings,
        protocolVersion: lister.protocolVersion,
      };
    },
    async close() {
      http.close();
    },
  };
}

/**
 * Whether a failed read may come from a damaged mirror: not a refusal of the content (too large,
 * a link, a missing directory), not the server or the network failing a fetch.
 */
function mayBeCacheDamage(err: unknown): boolean {
  return !(
    err instanceof FileRefusedError ||
    err instanceof ObjectTooLargeError ||
    err instanceof DirectoryMissingError ||
    err instanceof GitServerError ||
    err instanceof GitTransportError ||
    err instanceof GitAuthFileError ||
    err instanceof SourceReadError
  );
}

async function resolveLocal(db: ObjectDb, ref: string): Promise<string | undefined> {
  try {
    const oid = await git.resolveRef({ fs: db.fs as never, gitdir: db.gitdir, ref });
    return await peel(db, oid);
  } catch {
    return undefined;
  }
}

function pathSource(path: string, opts: GitSourceOptions, directory: string): GitSource {
  let gitdirP: Promise<ObjectDb> | undefined;
  const db = () => {
    gitdirP ??= (async () => {
      const gitdir = repositoryDirs(path).common;
      if (!existsSync(join(gitdir, 'objects'))) throw new Error(`${path} is not a Git repository`);
      return { fs: atomicFs, gitdir, cache: {} };
    })().catch((err: unknown) => {
      gitdirP = undefined;
      throw err;
    });
    return gitdirP;
  };
  let listings = 0;
  const source: GitSource = {
    kind: 'git',
    repository: path,
    async refs() {
      listings++;
      const d = await db();
      // A repository that went away lists no refs without failing: that is an outage, not "no branches".
      if (!existsSync(join(d.gitdir, 'objects'))) throw new Error(`${path} is not a Git repository (any more)`);
      return toRevisions(referenceNames(await listLocalRefs(d)));
    },
    async files(rev) {
      const d = await db();
      if (!(await hasCommit(d, rev.id))) throw new Error(`commit ${rev.id} of reference "${rev.ref}" is not in ${path}`);
      return fileSet(d, rev, directory, opts.maxFileSize);
    },
    async lookup(name) {
      if (!isCommitId(name)) return undefined;
      return (await hasCommit(await db(), name)) ? { id: name, ref: name } : undefined;
    },
    async prefetch() {},
    async history(revisionId, path, limit) {
      return fileHistory(await db(), revisionId, directory, path, limit, opts.maxFileSize);
    },
    cachedRefs: () => source.refs(),
    stats: () => ({ requests: 0, bytesReceived: 0, fetches: 0, listings, protocolVersion: 0 }),
  };
  return source;
}
