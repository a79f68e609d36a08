/**
 * The bare mirror of one remote repository in `storage.git.cache_dir`: objects fetched by
 * isomorphic-git, branches laid out as on the server (`+refs/heads/*:refs/heads/*`). Objects are
 * always read by commit id, so a tag whose objects arrived with a branch needs no local ref.
 *
 * - Reused across restarts: a folder that is already a repository is opened as it is (no
 *   "repository already exists" crash loop, Flipt #3710); a folder left half-initialised by a
 *   crash is set aside and made again. A new mirror is initialised under a temporary name and
 *   renamed into place, so two processes starting together cannot both half-make it.
 * - Every file write is atomic (see atomic-fs.ts).
 * - Fetches are serialised. A fetch of one ref tells the server the best commit we already hold
 *   (that ref's previous tip, else the default branch's), so a new branch forked from main
 *   transfers only its own commits instead of the whole history again.
 * - The pack a fetch receives is indexed by us, in bounded memory, not by isomorphic-git (which
 *   inflates every object whole): see pack-fetch.ts. It is capped at `maxFetchSize` bytes.
 * - Compaction: every fetch adds a pack file and isomorphic-git cannot repack, while each object
 *   read scans the pack list. Once there are more than `maxPacks`, the mirror is fetched again
 *   whole into a fresh folder (one pack) which then replaces it; the old folder is deleted.
 * - Damage: the packs are checked when the mirror is opened and whenever a read fails (see
 *   cache-check.ts). A damaged mirror is set aside and replaced by an empty one, logged with what
 *   was found; the next build fetches what it needs into it, so nothing is served or refused
 *   because of our own copy.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import type { SourceLogger } from '../types.js';
import { atomicFs, TEMP_MARKER } from './atomic-fs.js';
import { checkPacks, type CacheDamage } from './cache-check.js';
import { describeGitError } from './errors.js';
import type { GitHttpClient } from './http-client.js';
import type { RemoteRef } from './ls-refs.js';
import { readObjectHeader } from './object-header.js';
import type { ObjectDb } from './object-db.js';
import { checkObject, peel } from './objects.js';
import { packFetchingHttp } from './pack-fetch.js';
import { trimCharacter } from '../../text.js';

export interface MirrorOptions {
  readonly cacheDir: string;
  /** Repository URL (no credentials in it). */
  readonly url: string;
  readonly http: GitHttpClient;
  readonly headers: () => Promise<Record<string, string>>;
  readonly hasCredentials: boolean;
  /** Compact when a fetch leaves more pack files than this (default 40). */
  readonly maxPacks?: number;
  /** `storage.git.max_fetch_size`: bytes one fetch may receive. */
  readonly maxFetchSize: number;
  /** Where a damaged cache found and replaced is reported. */
  readonly logger?: SourceLogger;
}

/**
 * The largest object a fetch inflates whole to resolve deltas (a delta, its base or its result).
 * Objects stored whole are indexed as streams at any size; git never deltifies objects over its
 * core.bigFileThreshold (512 MiB), and hosted services refuse files far smaller (GitHub: 100 MB).
 */
export const MAX_DELTA_OBJECT_SIZE = 256 * 1024 * 1024;

export interface Mirror extends ObjectDb {
  /** Fetches one ref; `haveRef` is a local ref whose commit the server can assume we hold. */
  fetchOne(target: RemoteRef, haveRef?: string): Promise<void>;
  /** Fetches every branch (and every tag when `tags`) in one exchange. */
  fetchAll(tags: boolean, anyRef: string): Promise<void>;
  /** The branches and tags the mirror holds (tags peeled). */
  localRefs(): Promise<RemoteRef[]>;
  /** Deletes local branches and tags the server no longer lists. */
  prune(listing: readonly RemoteRef[]): Promise<void>;
  /** How many fetch exchanges were made (compactions included). */
  readonly fetches: number;
  /** Pack files in the mirror now. */
  packCount(): Promise<number>;
  /** Bumped each time the mirror is replaced by an empty one after damage (reads started before may retry). */
  readonly generation: number;
  /**
   * After a failed read: checks the packs and, when they are damaged, replaces the mirror by an
   * empty one (logged with `trigger` and what was found). True when it did.
   */
  repairIfDamaged(trigger: string): Promise<boolean>;
}

type Fs = Parameters<typeof git.fetch>[0]['fs'];
const fs = atomicFs as unknown as Fs;

/** `<host-path slug>-<hash of the URL>.git`: readable, and distinct per repository URL. */
export function mirrorPath(cacheDir: string, url: string): string {
  const u = new URL(url);
  const slug = trimCharacter(
    `${u.host}${u.pathname}`.replace(/\.git$/, '').replace(/[^A-Za-z0-9._-]+/g, '_'),
    '_',
  ).slice(0, 60);
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 12);
  return join(cacheDir, `${slug}-${hash}.git`);
}

function configText(url: string): string {
  return [
    '[core]',
    '\trepositoryformatversion = 0',
    '\tfilemode = true',
    '\tbare = true',
    '[remote "origin"]',
    `\turl = ${url}`,
    // Tags are not mapped by a refspec: isomorphic-git would try to write the peeled `^{}`
    // entries of the advertisement as refs. Fetches with `tags` write them itself.
    '\tfetch = +refs/heads/*:refs/heads/*',
    '',
  ].join('\n');
}

function isRepository(dir: string): boolean {
  return existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'config')) && existsSync(join(dir, 'objects'));
}

async function removeTempFiles(dir: string): Promise<void> {
  for (const sub of ['objects/pack', 'refs', '.']) {
    let names: string[];
    try {
      names = (await readdir(join(dir, sub), { recursive: true })) as string[];
    } catch {
      continue;
    }
    for (const n of names) if (n.includes(TEMP_MARKER)) await rm(join(dir, sub, n), { force: true });
  }
}

async function createRepository(dir: string, url: string): Promise<void> {
  const staging = `${dir}.init-${randomBytes(4).toString('hex')}`;
  await git.init({ fs, gitdir: staging, bare: true, defaultBranch: 'main' });
  await writeFile(join(staging, 'config'), configText(url));
  try {
    await rename(staging, dir);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    // Another process made it first: use theirs.
    if (!isRepository(dir)) throw err;
  }
}

/** Sets the damaged mirror aside, makes an empty one in its place, then deletes the old one. */
async function replaceDamaged(gitdir: string, url: string): Promise<void> {
  const aside = `${gitdir}.damaged-${randomBytes(4).toString('hex')}`;
  await rename(gitdir, aside);
  await createRepository(gitdir, url);
  await rm(aside, { recursive: true, force: true });
}

function logDamage(opts: MirrorOptions, gitdir: string, damage: readonly CacheDamage[], when: string): void {
  opts.logger?.warn(
    { cache: gitdir, when, damage: damage.slice(0, 20), damagedFiles: damage.length },
    'git cache damaged: set aside and replaced by an empty one; the commits served are fetched again',
  );
}

export async function openMirror(opts: MirrorOptions): Promise<Mirror> {
  const gitdir = mirrorPath(opts.cacheDir, opts.url);
  await mkdir(opts.cacheDir, { recursive: true });
  if (isRepository(gitdir)) {
    await removeTempFiles(gitdir);
    const damage = await checkPacks(gitdir);
    if (damage.length > 0) {
      logDamage(opts, gitdir, damage, 'found when the cache was opened');
      await replaceDamaged(gitdir, opts.url);
    }
  } else {
    if (existsSync(gitdir)) {
      // Half-made by a crash during a first start: set aside, then start over.
      const aside = `${gitdir}.broken-${randomBytes(4).toString('hex')}`;
      await rename(gitdir, aside);
      await rm(aside, { recursive: true, force: true });
    }
    await createRepository(gitdir, opts.url);
  }
  // The URL may have changed form (credentials moved out, trailing slash): keep the config exact.
  await atomicFs.promises.writeFile(join(gitdir, 'config'), configText(opts.url));

  // Replaced after a compaction: it holds the parsed indexes of packs that no longer exist.
  let cache: object = {};
  const db: ObjectDb = {
    fs,
    gitdir,
    get cache() {
      return cache;
    },
  };
  const maxPacks = opts.maxPacks ?? 40;
  /** The client one fetch into `into` talks through: it takes the pack (see pack-fetch.ts). */
  const fetchHttp = (into: string) =>
    packFetchingHttp({
      http: opts.http,
      gitdir: into,
      maxFetchSize: opts.maxFetchSize,
      maxObjectSize: MAX_DELTA_OBJECT_SIZE,
      // A ref-delta's base we already hold (servers send thin packs only when asked; kept for safety).
      externalBase: async (oid) => {
        if (into !== gitdir || (await readObjectHeader(db, oid)) === undefined) return undefined;
        const { type } = await checkObject(db, oid, undefined, MAX_DELTA_OBJECT_SIZE);
        const { object } = await git.readObject({ fs, gitdir, oid, cache, format: 'content' });
        return { type, content: object as Uint8Array };
      },
    });
  let fetches = 0;
  let generation = 0;
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = tail.then(fn);
    tail = p.then(
      () => {},
      () => {},
    );
    return p;
  };
  const localRef = async (ref: string) => {
    try {
      return await git.resolveRef({ fs, gitdir, ref });
    } catch {
      return undefined;
    }
  };

  const packCount = async () => (await readdir(join(gitdir, 'objects/pack')).catch(() => [] as string[])).filter((n) => n.endsWith('.idx')).length;

  /** Inside the serial section, after a fetch: one fresh full fetch replaces many packs. */
  async function compactIfNeeded(anyRef: string): Promise<void> {
    if ((await packCount()) <= maxPacks) return;
    const staging = `${gitdir}.compact-${randomBytes(4).toString('hex')}`;
    try {
      await git.init({ fs, gitdir: staging, bare: true, defaultBranch: 'main' });
      await writeFile(join(staging, 'config'), configText(opts.url));
      fetches++;
      await git.fetch({
        fs,
        http: fetchHttp(staging),
        gitdir: staging,
        cache: {},
        remote: 'origin',
        remoteRef: anyRef,
        singleBranch: false,
        tags: true,
        headers: await opts.headers(),
      });
      const aside = `${gitdir}.old-${randomBytes(4).toString('hex')}`;
      await rename(gitdir, aside);
      try {
        await rename(staging, gitdir);
      } catch (err) {
        await rename(aside, gitdir); // put the working mirror back
        throw err;
      }
      cache = {};
      await rm(aside, { recursive: true, force: true });
    } catch {
      // Not fatal: the mirror keeps working with many packs; the next fetch tries again.
      await rm(staging, { recursive: true, force: true });
    }
  }

  const mirror: Mirror = {
    fs,
    gitdir,
    get cache() {
      return cache;
    },
    get fetches() {
      return fetches;
    },
    get generation() {
      return generation;
    },
    packCount,
    repairIfDamaged(trigger) {
      const seen = generation;
      return serial(async () => {
        if (generation !== seen) return true; // replaced while this waited
        const damage = await checkPacks(gitdir);
        if (damage.length === 0) {
          opts.logger?.info({ cache: gitdir, trigger }, 'a read from the git cache failed; its packs are whole');
          return false;
        }
        logDamage(opts, gitdir, damage, `found after a failed read (${trigger})`);
        await replaceDamaged(gitdir, opts.url);
        cache = {};
        generation++;
        return true;
      });
    },
    fetchOne(target, haveRef) {
      return serial(async () => {
        const have = (await localRef(target.name)) !== undefined ? target.name : haveRef;
        fetches++;
        try {
          await git.fetch({
            fs,
            http: fetchHttp(gitdir),
            gitdir,
            cache,
            remote: 'origin',
            // Only used to choose what we tell the server we have.
            ref: have ?? target.name,
            remoteRef: target.name,
            singleBranch: true,
            tags: false,
            headers: await opts.headers(),
          });
        } catch (err) {
          throw describeGitError(err, `fetching ${target.name}`, opts.hasCredentials);
        }
        await compactIfNeeded(target.name);
      });
    },
    fetchAll(tags, anyRef) {
      return serial(async () => {
        fetches++;
        try {
          await git.fetch({
            fs,
            http: fetchHttp(gitdir),
            gitdir,
            cache,
            remote: 'origin',
            remoteRef: anyRef,
            singleBranch: false,
            tags,
            headers: await opts.headers(),
          });
        } catch (err) {
          throw describeGitError(err, 'fetching all branches', opts.hasCredentials);
        }
        await compactIfNeeded(anyRef);
      });
    },
    localRefs: () => serial(() => listLocalRefs(db)),
    prune(listing) {
      return serial(async () => {
        const remote = new Set(listing.map((r) => r.name));
        for (const r of await listLocalRefs(db, false)) {
          if (!remote.has(r.name)) await git.deleteRef({ fs, gitdir, ref: r.name });
        }
      });
    },
  };
  return mirror;
}

/** Branches and tags of a repository on disk (tags peeled unless `peelTags` is false). */
export async function listLocalRefs(db: ObjectDb, peelTags = true): Promise<RemoteRef[]> {
  const lfs = db.fs as Fs;
  const out: RemoteRef[] = [];
  const add = async (prefix: string, names: string[]) => {
    for (const short of names) {
      const name = `${prefix}${short}`;
      let oid: string;
      try {
        oid = await git.resolveRef({ fs: lfs, gitdir: db.gitdir, ref: name });
      } catch {
        continue;
      }
      if (!peelTags || prefix === 'refs/heads/') {
        out.push({ name, oid });
        continue;
      }
      const peeled = await peel(db, oid).catch(() => oid);
      out.push(peeled !== oid ? { name, oid, peeled } : { name, oid });
    }
  };
  await add('refs/heads/', await git.listBranches({ fs: lfs, gitdir: db.gitdir }));
  await add('refs/tags/', await git.listTags({ fs: lfs, gitdir: db.gitdir }));
  return out;
}
