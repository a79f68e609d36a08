/**
 * Which names a request's `reference` may use: a branch by its short name (`main`,
 * `preview/pr-12`), a tag by its short name (`v1.4.0`) unless a branch has the same name, in which
 * case the tag is `refs/tags/<name>` (the branch keeps the short name: branches are what pull
 * requests create), and a full 40-hex commit id (resolved separately: commits are not listed).
 */
import type { RemoteRef } from './ls-refs.js';

export interface ListedRef {
  /** The reference name requests use. */
  readonly name: string;
  /** refs/heads/... or refs/tags/... */
  readonly fullName: string;
  /** The object the ref points at (an annotated tag's own id). */
  readonly oid: string;
  /** The commit it designates (annotated tags peeled). */
  readonly commit: string;
}

const COMMIT_ID = /^[0-9a-f]{40}$/;

export function isCommitId(name: string): boolean {
  return COMMIT_ID.test(name);
}

export function referenceNames(refs: readonly RemoteRef[]): Map<string, ListedRef> {
  const out = new Map<string, ListedRef>();
  const heads = refs.filter((r) => r.name.startsWith('refs/heads/'));
  const tags = refs.filter((r) => r.name.startsWith('refs/tags/'));
  for (const r of heads) {
    const name = r.name.slice('refs/heads/'.length);
    out.set(name, { name, fullName: r.name, oid: r.oid, commit: r.peeled ?? r.oid });
  }
  for (const r of tags) {
    const short = r.name.slice('refs/tags/'.length);
    const name = out.has(short) ? r.name : short;
    out.set(name, { name, fullName: r.name, oid: r.oid, commit: r.peeled ?? r.oid });
  }
  return out;
}
