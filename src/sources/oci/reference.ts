/**
 * `storage.oci.repository` and the REMOTE of `vexil bundle push/pull`:
 * `[http(s)://]host[:port]/name[:tag|@sha256:<hex>]` ⇄ OciReference. Credentials never belong in
 * a reference (they would end up in logs and /meta/snapshots), so `user@` is refused.
 */
import type { OciReference } from './types.js';

/** One path component of a repository name (distribution's grammar, lower case only). */
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;

export function parseOciReference(text: string, opts: { insecure?: boolean } = {}): OciReference {
  // Never echo a password someone put before the host.
  const shown = text.trim().replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?)[^/@]*@/, '$1***@');
  const bad = (why: string) => new Error(`invalid OCI reference "${shown}": ${why}`);
  let rest = text.trim();
  if (rest === '') throw new Error('invalid OCI reference: it is empty (write host[:port]/name:tag)');
  let scheme: 'https' | 'http' = 'https';
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(rest);
  if (schemeMatch !== null) {
    const s = (schemeMatch[1] as string).toLowerCase();
    if (s !== 'http' && s !== 'https') throw bad(`unsupported scheme "${s}://" (use https:// or http://)`);
    scheme = s;
    rest = rest.slice(schemeMatch[0].length);
  }
  if (opts.insecure === true) scheme = 'http';

  const slash = rest.indexOf('/');
  if (slash < 0) throw bad('no registry host (write host[:port]/name:tag, e.g. registry.example.com/team/flags:v1)');
  const registry = rest.slice(0, slash);
  if (registry.includes('@')) throw bad('credentials do not belong in the reference (use storage.oci.authentication)');
  const host = HOST.exec(registry);
  if (host === null) throw bad(`"${registry}" is not a registry host[:port]`);
  if (host[1] !== undefined) {
    const port = Number(host[1]);
    if (port < 1 || port > 65535) throw bad(`port ${host[1]} is out of range`);
  }
  // Docker's rule: a first component without `.` or `:` (other than localhost) is a repository path, not a host.
  if (!registry.includes('.') && !registry.includes(':') && registry !== 'localhost') {
    throw bad(`"${registry}" does not look like a registry host (it needs a dot or a port, e.g. ${registry}.example.com or localhost:5000)`);
  }

  let path = rest.slice(slash + 1);
  let digest: string | undefined;
  const at = path.indexOf('@');
  if (at >= 0) {
    digest = path.slice(at + 1);
    path = path.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`digest "${digest}" is not sha256:<64 lower-case hex digits>`);
  }
  let tag: string | undefined;
  const lastSlash = path.lastIndexOf('/');
  const colon = path.indexOf(':', lastSlash + 1);
  if (colon >= 0) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag "${tag}" is not valid (letters, digits, _ . -, at most 128, not starting with . or -)`);
  }
  if (path === '') throw bad('the repository name is missing after the host');
  for (const component of path.split('/')) {
    if (!COMPONENT.test(component)) {
      throw bad(`repository name "${path}" is not valid (lower-case letters and digits separated by . _ __ or -, components joined by /)`);
    }
  }
  if (path.length > 255) throw bad('the repository name is longer than 255 characters');
  // A digest pins the content: a tag written beside it is only a label, so the digest wins.
  return digest !== undefined ? { scheme, registry, repository: path, digest } : { scheme, registry, repository: path, tag: tag ?? 'latest' };
}

/** The reference as text (https is implied; never any credential). */
export function formatOciReference(ref: OciReference): string {
  const base = `${ref.scheme === 'http' ? 'http://' : ''}${ref.registry}/${ref.repository}`;
  return ref.digest !== undefined ? `${base}@${ref.digest}` : `${base}:${ref.tag ?? 'latest'}`;
}

/** The tag, or the digest of a pinned reference: the name a source serves it under. */
export function referenceName(ref: OciReference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}

/** `https://host[:port]`: where the distribution API lives (Docker Hub's is not at docker.io itself). */
export function registryBaseUrl(ref: OciReference): string {
  return `${ref.scheme}://${ref.registry === 'docker.io' ? 'registry-1.docker.io' : ref.registry}`;
}
