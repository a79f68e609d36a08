/**
 * Maps `VEXIL_*` environment variables onto config keys by walking the schema's property names,
 * so a key with underscores (`http_port`) resolves unambiguously: VEXIL_SERVER_HTTP_PORT is
 * server.http_port because `server` has a property spelled HTTP_PORT, not one spelled HTTP.
 * Under a map (oidc `providers`) the user's entry name takes the tokens before a known field:
 * VEXIL_AUTHENTICATION_METHODS_OIDC_PROVIDERS_GOOGLE_CLIENT_ID → providers.google.client_id.
 */
import type { SchemaNode } from './schema.js';
import { deref, isMap } from './schema.js';

export const ENV_PREFIX = 'VEXIL_';

export type EnvKeyMatch =
  | { ok: true; path: string[]; schema: SchemaNode }
  | { ok: false; path: string[] /* best guess, for the message */ };

/**
 * Resolves one variable name (with the prefix) to a key path.
 * `existing` is the config read so far: under a map, an entry already named there (in any case)
 * is preferred, so VEXIL_..._PROVIDERS_GOOGLE_SCOPES reaches a `Google:` entry of the file.
 */
export function resolveEnvKey(root: SchemaNode, name: string, existing: unknown, prefix = ENV_PREFIX): EnvKeyMatch {
  const tokens = name.slice(prefix.length).split('_');
  let deepest = { consumed: 0, path: [] as string[] };
  const found: Array<{ path: string[]; schema: SchemaNode; known: boolean }> = [];

  const walk = (node: SchemaNode, i: number, path: string[], value: unknown, known: boolean) => {
    const n = deref(root, node);
    if (i > deepest.consumed) deepest = { consumed: i, path };
    if (i === tokens.length) {
      found.push({ path, schema: n, known });
      return;
    }
    if (n.type !== 'object') return;
    for (const [prop, child] of Object.entries(n.properties ?? {})) {
      const propTokens = prop.toUpperCase().split('_');
      if (propTokens.every((t, k) => tokens[i + k] === t)) {
        walk(child, i + propTokens.length, [...path, prop], childOf(value, prop), known);
      }
    }
    if (isMap(n)) {
      const entrySchema = n.additionalProperties as SchemaNode;
      const names = value && typeof value === 'object' ? Object.keys(value) : [];
      for (let j = i + 1; j <= tokens.length; j++) {
        const wanted = tokens.slice(i, j).join('_');
        if (wanted === '') continue;
        const same = names.find((k) => k.toUpperCase() === wanted);
        const key = same ?? wanted.toLowerCase();
        walk(entrySchema, j, [...path, key], childOf(value, key), known && same !== undefined);
      }
    }
  };
  walk(root, 0, [], existing, true);

  if (found.length === 0) {
    const rest = tokens.slice(deepest.consumed).join('_').toLowerCase();
    return { ok: false, path: rest === '' ? deepest.path : [...deepest.path, rest] };
  }
  // Several readings happen only under a map whose entry name could end at different tokens;
  // an entry that already exists wins, then the shortest entry name.
  const best = found.find((f) => f.known) ?? found[0]!;
  return { ok: true, path: best.path, schema: best.schema };
}

function childOf(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}
