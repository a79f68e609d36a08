/**
 * Names of bundles in the local bundle store. `vexil bundle build` names a bundle `name:tag`
 * (`flags:v1`, `team/flags:v1`); `vexil bundle pull` stores it under the remote's own name
 * (`127.0.0.1:5000/team/flags:v1`, bundleNameOf in sources/oci/source.ts: the name `vexil serve` looks
 * for), so a pulled bundle and a built one never collide.
 */
/** A repository path component, as the OCI distribution spec allows them. */
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

export const DEFAULT_TAG = 'latest';

/**
 * `name[:tag]` for `build` → `name:tag` (tag defaults to latest), or an Error saying what is wrong.
 * A name whose first component looks like a registry (`host:port/…`, `example.com/…`) is refused:
 * builds go to the local store, and reach a registry only through `push`.
 */
export function parseBuildName(text: string): string | Error {
  if (text.includes('@')) return new Error(`"${text}": a digest cannot be built; name the bundle name:tag (e.g. flags:v1)`);
  const slash = text.lastIndexOf('/');
  const colon = text.lastIndexOf(':');
  const hasTag = colon > slash;
  const repository = hasTag ? text.slice(0, colon) : text;
  const tag = hasTag ? text.slice(colon + 1) : DEFAULT_TAG;
  const components = repository.split('/');
  const first = components[0] ?? '';
  if (components.length > 1 && (first.includes(':') || first.includes('.') || first === 'localhost')) {
    return new Error(`"${text}" names a registry; build into the local store (e.g. flags:v1), then "vexil bundle push flags:v1 ${text}"`);
  }
  if (repository === '' || !components.every((c) => COMPONENT.test(c))) {
    return new Error(`"${text}" is not a bundle name: lower-case letters, digits and . _ - separated by /, then an optional :tag (e.g. team/flags:v1)`);
  }
  if (!TAG.test(tag)) return new Error(`"${tag}" is not a tag: letters, digits, . _ - (at most 128, not starting with . or -)`);
  return `${repository}:${tag}`;
}

/** Names a user may mean by TAG in `push TAG`: as written, then with `:latest` when no tag is given. */
export function storeNameCandidates(text: string): string[] {
  const slash = text.lastIndexOf('/');
  const hasTagOrDigest = text.includes('@') || text.lastIndexOf(':') > slash;
  return hasTagOrDigest ? [text] : [text, `${text}:${DEFAULT_TAG}`];
}
