/**
 * Resolves the server configuration: YAML file (optional) → `${VAR}` placeholders → `VEXIL_*`
 * environment overrides → schema defaults → schema check → cross-key rules → Config with
 * durations in milliseconds and absolute paths. Synchronous: it runs once, before anything starts.
 *
 * Every problem is collected, then thrown together as one ConfigError whose message names each
 * key's dotted path, what was expected, and where the value came from (file line, variable name).
 *
 * The file is ours, so an unknown key there is refused. The environment is shared with the
 * platform (Kubernetes sets VEXIL_PORT, VEXIL_SERVICE_HOST, ... for a Service named `vexil`; CI
 * systems and wrappers set their own), so a `VEXIL_*` variable that names no key is left alone
 * and only reported back by name (loadConfigReport), for the caller to log once it has a logger.
 */
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import type { Config } from './types.js';
import { DurationError, parseDuration } from './duration.js';
import { ConfigError, type ConfigProblem } from './errors.js';
import { ENV_PREFIX, resolveEnvKey } from './env.js';
import { readConfigFile, type FilePosition } from './file.js';
import { coerceFromString, quote } from './coerce.js';
import { BUNDLED_EXAMPLES_DIR } from './paths.js';
import { checkSemantics } from './semantic.js';
import { configSchema, deref, schemaAt, type SchemaNode } from './schema.js';

export interface LoadConfigOptions {
  /** YAML config file (relative to `cwd`). Without it, only defaults and the environment apply. */
  file?: string;
  /** Environment to read `VEXIL_*` overrides and `${VAR}` placeholders from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Base of relative paths given by environment variables, and of `file` (default process.cwd()). */
  cwd?: string;
  /** Served when storage.local.path is not set (default: the package's bundled examples/ folder). */
  defaultLocalPath?: string;
  /** `VEXIL_*` variables vexil reads itself (not config keys): skipped, and not reported as ignored. */
  ignoreEnv?: readonly string[];
}

/** A `VEXIL_*` variable that names no config key: not applied. */
export interface IgnoredVariable {
  /** The variable's name (never its value: it is the platform's, and may be a secret). */
  readonly variable: string;
  /** The variable of the nearest config key, when the name looks like a misspelling of one. */
  readonly didYouMean?: string;
}

export interface ConfigReport {
  readonly config: Config;
  /** In name order; the caller logs them (at debug level) once its logger exists. */
  readonly ignoredVariables: readonly IgnoredVariable[];
}

type Origin =
  | { kind: 'file'; file: string; pos: FilePosition }
  | { kind: 'placeholder'; variable: string; file: string; pos: FilePosition }
  | { kind: 'env'; variable: string };

type Tree = Record<string, unknown>;

/** Flipt's placeholder form: the whole value is `${NAME}`. */
const PLACEHOLDER = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** Names Flipt uses for methods that vexil calls differently. */
/** Path-valued keys resolved like storage.local.path (which also has a default of its own). */
const RELATIVE_PATH_KEYS = [
  'data_dir',
  'authentication.storage.sqlite.path',
  'webhooks.github.secret_file',
  'webhooks.gitlab.token_file',
  'webhooks.gitea.secret_file',
  'webhooks.generic.secret_file',
  'webhooks.registry.token_file',
] as const;

const RENAMED_KEYS: Readonly<Record<string, string>> = { github: 'code_host', kubernetes: 'cluster' };

/** Loads and validates the configuration. Throws ConfigError listing every problem found. */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  return loadConfigReport(opts).config;
}

/** As loadConfig, also naming the `VEXIL_*` variables that were ignored (they name no key). */
export function loadConfigReport(opts: LoadConfigOptions = {}): ConfigReport {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const { schema, validate } = configSchema();
  const problems: ConfigProblem[] = [];
  const origins = new Map<string, Origin>();
  let data: Tree = {};
  let fileDir: string | undefined;

  if (opts.file !== undefined) {
    const file = opts.file;
    const read = readConfigFile(path.resolve(cwd, file));
    if (read.problems.length > 0) {
      throw new ConfigError(read.problems.map((p) => ({ ...p, message: p.message.replace(path.resolve(cwd, file), file) })));
    }
    data = read.data;
    fileDir = path.dirname(path.resolve(cwd, file));
    for (const [key, pos] of read.positions) origins.set(key, { kind: 'file', file, pos });
    substitutePlaceholders(data, [], { schema, env, origins, problems, file });
  }

  const ignoredVariables = applyEnvOverrides(data, { schema, env, origins, problems, ignore: new Set(opts.ignoreEnv ?? []) });

  const candidate = structuredClone(data);
  if (!validate(candidate)) {
    for (const err of validate.errors ?? []) {
      const p = describeSchemaError(err, candidate, schema, origins);
      if (p && !problems.some((q) => q.path === p.path && q.message === p.message)) problems.push(p);
    }
  }
  if (problems.length === 0) problems.push(...checkSemantics(candidate));
  if (problems.length > 0) throw new ConfigError(problems);

  convertDurations(candidate, schema, schema);
  const storage = candidate.storage as { local: { path?: string } };
  const localPath = storage.local.path;
  if (localPath === undefined) {
    storage.local.path = path.resolve(opts.defaultLocalPath ?? BUNDLED_EXAMPLES_DIR);
  } else {
    const origin = origins.get('storage.local.path');
    storage.local.path = path.resolve(origin?.kind === 'env' || fileDir === undefined ? cwd : fileDir, localPath);
  }
  // Other file paths: relative to the config file when written there, to cwd when from the environment.
  for (const key of RELATIVE_PATH_KEYS) {
    const keys = key.split('.');
    const parent = keys.slice(0, -1).reduce<Tree | undefined>((t, k) => t?.[k] as Tree | undefined, candidate);
    const last = keys[keys.length - 1]!;
    const value = parent?.[last];
    if (parent === undefined || typeof value !== 'string') continue;
    const origin = origins.get(key);
    parent[last] = path.resolve(origin?.kind === 'env' || fileDir === undefined ? cwd : fileDir, value);
  }
  const session = (candidate.authentication as { session: { domain?: string } }).session;
  if (session.domain !== undefined) session.domain = bareDomain(session.domain);
  return { config: candidate as unknown as Config, ignoredVariables };
}

interface WalkContext {
  schema: SchemaNode;
  env: NodeJS.ProcessEnv;
  origins: Map<string, Origin>;
  problems: ConfigProblem[];
}

/** Replaces whole-value `${NAME}` strings of the file, as Flipt does, typed by the schema. */
function substitutePlaceholders(node: unknown, at: string[], ctx: WalkContext & { file: string }): void {
  if (node === null || typeof node !== 'object') return;
  const entries: Array<[string, unknown]> = Array.isArray(node)
    ? node.map((v, i) => [String(i), v])
    : Object.entries(node as Tree);
  for (const [key, value] of entries) {
    const keyPath = [...at, key];
    if (typeof value !== 'string') {
      substitutePlaceholders(value, keyPath, ctx);
      continue;
    }
    const m = PLACEHOLDER.exec(value);
    if (!m) continue;
    const variable = m[1]!;
    const dotted = keyPath.join('.');
    const fileOrigin = ctx.origins.get(dotted);
    const pos = fileOrigin?.kind === 'file' ? fileOrigin.pos : { line: 0, col: 0, keyLine: 0, keyCol: 0 };
    const text = ctx.env[variable];
    // Flipt reads an unset variable as "": refused here, since an empty secret or CSRF key
    // would silently weaken the server.
    if (text === undefined) {
      ctx.problems.push({
        path: dotted,
        message: `environment variable ${variable} is not set (referenced as \${${variable}} at ${ctx.file}:${pos.line}:${pos.col})`,
        source: `${ctx.file}:${pos.line}:${pos.col}`,
      });
      setAt(node as Tree, key, undefined);
      continue;
    }
    ctx.origins.set(dotted, { kind: 'placeholder', variable, file: ctx.file, pos });
    const coerced = coerceFromString(schemaAt(ctx.schema, keyPath), text);
    if (!coerced.ok) {
      ctx.problems.push({ path: dotted, message: `${coerced.message} from \${${variable}}`, source: variable });
      setAt(node as Tree, key, undefined);
    } else {
      setAt(node as Tree, key, coerced.value);
    }
  }
}

function setAt(container: Tree | unknown[], key: string, value: unknown): void {
  if (Array.isArray(container)) {
    container[Number(key)] = value;
  } else if (value === undefined) {
    delete container[key];
  } else {
    container[key] = value;
  }
}

/**
 * Applies the `VEXIL_*` variables that name a config key (empty ones are skipped, as in Flipt),
 * broadest keys first; a value of the wrong type is a problem naming the variable. Returns the
 * variables that name no key, which are not applied: a partial match (VEXIL_SERVER_FOO, where
 * `server` is a key but `foo` is not) names no key either.
 */
function applyEnvOverrides(data: Tree, ctx: WalkContext & { ignore: Set<string> }): IgnoredVariable[] {
  const overrides: Array<{ variable: string; path: string[]; value: unknown }> = [];
  const ignored: IgnoredVariable[] = [];
  const names = Object.keys(ctx.env)
    .filter((n) => n.startsWith(ENV_PREFIX) && !ctx.ignore.has(n) && ctx.env[n] !== undefined)
    .sort();
  for (const variable of names) {
    const text = ctx.env[variable]!;
    const match = resolveEnvKey(ctx.schema, variable, data);
    if (!match.ok) {
      const nearest = nearestEnvKey(ctx.schema, match.path);
      const didYouMean = nearest === undefined ? undefined : envVariableOf(nearest);
      // Suggested only when it would be read (the guess may keep a wrong word after a right one).
      const readable = didYouMean !== undefined && resolveEnvKey(ctx.schema, didYouMean, data).ok;
      ignored.push(readable ? { variable, didYouMean } : { variable });
      continue;
    }
    if (text === '') continue;
    const coerced = coerceFromString(match.schema, text);
    if (!coerced.ok) {
      ctx.problems.push({ path: match.path.join('.'), message: `${coerced.message} from ${variable}`, source: variable });
      continue;
    }
    overrides.push({ variable, path: match.path, value: coerced.value });
  }
  overrides.sort((a, b) => a.path.length - b.path.length);
  for (const o of overrides) {
    let node: Tree = data;
    for (const key of o.path.slice(0, -1)) {
      const next = node[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
      node = node[key] as Tree;
    }
    node[o.path[o.path.length - 1]!] = o.value;
    const dotted = o.path.join('.');
    for (const key of [...ctx.origins.keys()]) if (key.startsWith(`${dotted}.`)) ctx.origins.delete(key);
    ctx.origins.set(dotted, { kind: 'env', variable: o.variable });
  }
  return ignored;
}

/** One ajv error → one problem with the dotted path, the expectation and the value's origin. */
function describeSchemaError(
  err: ErrorObject,
  data: Tree,
  schema: SchemaNode,
  origins: Map<string, Origin>,
): ConfigProblem | undefined {
  const at = err.instancePath === '' ? [] : err.instancePath.slice(1).split('/').map(unescapePointer);
  const value = valueAt(data, at);
  const node = schemaAt(schema, at);
  let keyPath = at;
  let message: string;
  let showsValue = false;

  switch (err.keyword) {
    case 'additionalProperties': {
      keyPath = [...at, String(err.params.additionalProperty)];
      const origin = originOf(origins, keyPath);
      const where = origin ? ` (${originText(origin, true)})` : '';
      return {
        path: keyPath.join('.'),
        message: `unknown key${where}${suggestion(schema, keyPath)}`,
        ...(origin ? { source: originSource(origin) } : {}),
      };
    }
    case 'required':
      keyPath = [...at, String(err.params.missingProperty)];
      return { path: keyPath.join('.'), message: 'required' };
    case 'type':
      if (node?.format === 'duration') {
        message = `invalid duration ${quote(value)} (expected a string such as 30s, 1m30s, 24h)`;
        showsValue = true;
      } else {
        message = `must be ${withArticle(String(err.params.type))}`;
      }
      break;
    case 'format':
      if (err.params.format === 'duration') {
        try {
          parseDuration(String(value));
          message = `invalid duration ${quote(value)}`;
        } catch (e) {
          message = e instanceof DurationError ? e.message : String(e);
        }
        showsValue = true;
      } else if (err.params.format === 'uri') {
        message = 'must be an absolute URL (e.g. https://example.com)';
      } else {
        message = `must be a ${String(err.params.format)}`;
      }
      break;
    case 'enum':
      message = `must be one of ${(err.params.allowedValues as unknown[]).map(String).join(', ')}`;
      break;
    case 'minimum':
    case 'maximum':
      message = `must be ${String(err.params.comparison)} ${String(err.params.limit)}`;
      break;
    case 'minLength':
      message = err.params.limit === 1 ? 'must not be empty' : `must be at least ${String(err.params.limit)} characters`;
      break;
    default:
      message = err.message ?? `fails ${err.keyword}`;
  }

  const origin = originOf(origins, keyPath);
  // A secret-bearing key (marked `writeOnly` in the schema: passwords, tokens, webhook secrets,
  // database URLs with their password, a Slack webhook URL) never has its value quoted.
  const secret = node?.writeOnly === true;
  const details = [showsValue || secret ? '' : `got ${quote(value)}`, origin ? originText(origin, false) : '']
    .filter(Boolean)
    .join(' ');
  return {
    path: keyPath.join('.'),
    message: details ? `${message} (${details})` : message,
    ...(origin ? { source: originSource(origin) } : {}),
  };
}

function originOf(origins: Map<string, Origin>, keyPath: string[]): Origin | undefined {
  for (let n = keyPath.length; n > 0; n--) {
    const o = origins.get(keyPath.slice(0, n).join('.'));
    if (o) return o;
  }
  return undefined;
}

function originText(o: Origin, ofKey: boolean): string {
  switch (o.kind) {
    case 'env':
      return `from ${o.variable}`;
    case 'placeholder':
      return `from \${${o.variable}} at ${o.file}:${o.pos.line}:${o.pos.col}`;
    case 'file':
      return ofKey ? `at ${o.file}:${o.pos.keyLine}:${o.pos.keyCol}` : `at ${o.file}:${o.pos.line}:${o.pos.col}`;
  }
}

function originSource(o: Origin): string {
  return o.kind === 'env' ? o.variable : `${o.file}:${o.pos.line}:${o.pos.col}`;
}

/** " (did you mean "local"?)" for a near-miss of a known key, or a Flipt name vexil spells differently. */
function suggestion(schema: SchemaNode, keyPath: string[]): string {
  const near = nearestKey(schema, keyPath);
  if (near === undefined) return '';
  return near.renamed ? ` (vexil calls this method "${near.key}")` : ` (did you mean "${near.key}"?)`;
}

/** The sibling key an unknown key most likely meant: a Flipt name vexil spells differently, or a near-miss. */
function nearestKey(schema: SchemaNode, keyPath: string[]): { key: string; renamed: boolean } | undefined {
  const key = keyPath[keyPath.length - 1];
  const parent = schemaAt(schema, keyPath.slice(0, -1));
  if (key === undefined || !parent?.properties) return undefined;
  const known = Object.keys(parent.properties);
  const renamed = RENAMED_KEYS[key.toLowerCase()];
  if (renamed && known.includes(renamed)) return { key: renamed, renamed: true };
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best === undefined ? undefined : { key: best, renamed: false };
}

/**
 * The key path an unresolved variable most likely meant (resolveEnvKey's best guess ends in the
 * unmatched rest, e.g. `http_prot`), also trying the rest's first word (GITHUB of GITHUB_ENABLED).
 */
function nearestEnvKey(schema: SchemaNode, guess: string[]): string[] | undefined {
  const parent = guess.slice(0, -1);
  const rest = guess[guess.length - 1];
  if (rest === undefined) return undefined;
  const whole = nearestKey(schema, guess);
  if (whole !== undefined) return [...parent, whole.key];
  const firstWord = rest.split('_')[0]!;
  if (firstWord === rest) return undefined;
  const near = nearestKey(schema, [...parent, firstWord]);
  return near === undefined ? undefined : [...parent, near.key, ...rest.split('_').slice(1)];
}

/** The variable that sets a key path (VEXIL_SERVER_HTTP_PORT for server.http_port). */
function envVariableOf(keyPath: readonly string[]): string {
  return ENV_PREFIX + keyPath.join('_').toUpperCase();
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

function withArticle(type: string): string {
  const name = type === 'object' ? 'mapping (object)' : type === 'array' ? 'list (array)' : type;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function valueAt(data: unknown, keyPath: string[]): unknown {
  let v = data;
  for (const k of keyPath) v = v && typeof v === 'object' ? (v as Tree)[k] : undefined;
  return v;
}

/** Replaces every `format: duration` string (already validated) by its milliseconds. */
function convertDurations(value: unknown, node: SchemaNode, root: SchemaNode): unknown {
  const n = deref(root, node);
  if (n.format === 'duration' && typeof value === 'string') return parseDuration(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (n.items) value.forEach((v, i) => (value[i] = convertDurations(v, n.items!, root)));
    return value;
  }
  const tree = value as Tree;
  for (const key of Object.keys(tree)) {
    const child = n.properties?.[key] ?? (typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined);
    if (child) tree[key] = convertDurations(tree[key], child, root);
  }
  return value;
}

/** Flipt strips a scheme and a port from session.domain (`http://host:8080` → `host`). */
function bareDomain(domain: string): string {
  let d = domain.trim();
  const scheme = d.indexOf('://');
  if (scheme >= 0) d = d.slice(scheme + 3);
  d = d.split('/')[0]!;
  if (d.startsWith('[')) return d.slice(0, d.indexOf(']') + 1);
  return d.replace(/:\d*$/, '');
}
