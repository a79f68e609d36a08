/**
 * `vexil bundle build|list|push|pull`: flag state packed as OCI bundles in a local bundle store
 * (an OCI image layout), and copied to and from OCI registries. Parses the command line, resolves
 * the settings (config + flags) and hands over to the other files of cli/bundle/.
 *
 * Exit status: 0 done; 1 failed (invalid state or config, unknown bundle or tag, refused
 * credentials, unreachable registry, digest mismatch); 2 usage error. A password is taken from
 * stdin, the config or the environment, never from the command line, and every line written is
 * scrubbed of it.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/errors.js';
import { openBundleStore } from '../../sources/oci/bundle-store.js';
import { parseOciReference } from '../../sources/oci/reference.js';
import { createRegistryClient } from '../../sources/oci/registry-client.js';
import { readBundleManifest } from '../../sources/oci/bundle-format.js';
import type { BundleStore, OciReference, StoredBundle } from '../../sources/oci/types.js';
import { buildCommand } from './build.js';
import { describeFailure, redactor } from './failure.js';
import { formatBundleJson, formatBundleTable } from './format.js';
import { bundleNameOf } from '../../sources/oci/source.js';
import { parseBuildName } from './names.js';
import { resolveSettings, type BundleFlags, type BundleSettings } from './settings.js';
import { pullCommand, pushCommand, UnknownBundleError } from './transfer.js';
import type { CliIO } from '../io.js';
import { BUNDLE_USAGE, UsageError } from '../usage.js';

/** What the command takes from the process; tests replace it. */
export interface BundleDeps {
  readonly env?: NodeJS.ProcessEnv;
  /** All of stdin, for --password-stdin. */
  readonly readStdin?: () => Promise<string>;
  readonly fetch?: typeof fetch;
  readonly now?: () => Date;
}

type Sub = 'build' | 'list' | 'push' | 'pull';

const COMMON = {
  config: { type: 'string', short: 'c' },
  'bundles-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
const REMOTE = {
  username: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  insecure: { type: 'boolean' },
} as const;

const SUBCOMMANDS = {
  build: { options: { ...COMMON, dir: { type: 'string', short: 'd' }, 'manifest-version': { type: 'string' } }, positionals: ['NAME[:TAG]'] },
  list: { options: { ...COMMON, format: { type: 'string', short: 'f' } }, positionals: [] },
  push: { options: { ...COMMON, ...REMOTE }, positionals: ['NAME[:TAG]', 'REMOTE'] },
  pull: { options: { ...COMMON, ...REMOTE }, positionals: ['REMOTE'] },
} as const;

const LIST_FORMATS = ['table', 'json'] as const;

export async function runBundle(args: readonly string[], io: CliIO, deps: BundleDeps = {}): Promise<number> {
  const [first, ...rest] = args;
  if (first === undefined) throw new UsageError('missing bundle command: build, list, push or pull', BUNDLE_USAGE);
  if (first === '-h' || first === '--help' || first === 'help') {
    io.stdout(BUNDLE_USAGE);
    return 0;
  }
  if (!Object.hasOwn(SUBCOMMANDS, first)) {
    throw new UsageError(`unknown bundle command "${first}" (expected build, list, push or pull)`, BUNDLE_USAGE);
  }
  const sub = first as Sub;
  for (const arg of rest) {
    // Refused by name, before parsing, so the value is never echoed in an error.
    if (arg === '--password' || arg.startsWith('--password=') || arg === '-p' || (arg.startsWith('-p') && !arg.startsWith('--'))) {
      throw new UsageError(
        'a password is not accepted on the command line (it would show in the process list and shell history); use --password-stdin or VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD',
        BUNDLE_USAGE,
      );
    }
  }

  const spec = SUBCOMMANDS[sub];
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: spec.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`bundle ${sub}: ${(err as Error).message}`, BUNDLE_USAGE);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) {
    io.stdout(BUNDLE_USAGE);
    return 0;
  }
  const positionals = parsed.positionals;
  if (positionals.length < spec.positionals.length) {
    throw new UsageError(`bundle ${sub}: missing ${spec.positionals.slice(positionals.length).join(' ')}`, BUNDLE_USAGE);
  }
  if (positionals.length > spec.positionals.length) {
    throw new UsageError(`bundle ${sub}: unexpected argument "${positionals[spec.positionals.length]}"`, BUNDLE_USAGE);
  }

  const str = (key: string): string | undefined => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
  let password: string | undefined;
  if (values['password-stdin'] === true) {
    password = (await (deps.readStdin ?? readProcessStdin)()).replace(/\r?\n$/, '');
    if (password === '') throw new UsageError('--password-stdin: stdin held no password', BUNDLE_USAGE);
  }
  const flags: BundleFlags = {
    ...(str('config') !== undefined ? { config: str('config') } : {}),
    ...(str('bundles-dir') !== undefined ? { bundlesDir: str('bundles-dir') } : {}),
    ...(str('manifest-version') !== undefined ? { manifestVersion: str('manifest-version') } : {}),
    ...(str('username') !== undefined ? { username: str('username') } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(values.insecure === true ? { insecure: true } : {}),
  };

  // From here on every line is scrubbed of the secrets, whatever composed it.
  const env = deps.env ?? process.env;
  let scrub = redactor([password, env.VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD]);
  let out: CliIO = scrubbed(io, scrub);
  try {
    const settings = resolveSettings(flags, io.cwd, env);
    const c = settings.credentials;
    const token = c?.tokenFile !== undefined ? await readFile(c.tokenFile, 'utf8').then((x) => x.trim(), () => undefined) : undefined;
    scrub = redactor([password, env.VEXIL_STORAGE_OCI_AUTHENTICATION_PASSWORD, c?.password, token], c?.username);
    out = scrubbed(io, scrub);
    switch (sub) {
      case 'build':
        return await build(positionals[0]!, str('dir') ?? '.', settings, out, deps);
      case 'list':
        return await list(str('format') ?? 'table', settings, out);
      case 'push':
      case 'pull':
        return await transfer(sub, positionals, settings, out, deps);
    }
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(scrub(err.message), err.usage);
    if (err instanceof ConfigError || err instanceof UnknownBundleError) {
      out.stderr(`vexil: ${err.message}\n`);
      return 1;
    }
    throw new Error(scrub(err instanceof Error ? err.message : String(err)));
  }
}

async function build(nameText: string, dir: string, settings: BundleSettings, io: CliIO, deps: BundleDeps): Promise<number> {
  const name = parseBuildName(nameText);
  if (name instanceof Error) throw new UsageError(`bundle build: ${name.message}`, BUNDLE_USAGE);
  if (!(await isDirectory(resolve(io.cwd, dir)))) throw new UsageError(`bundle build: no such folder: ${dir}`, BUNDLE_USAGE);
  return buildCommand(
    {
      dir,
      name,
      bundlesDir: settings.bundlesDir,
      manifestVersion: settings.manifestVersion,
      maxFileSize: settings.maxFileSize,
      maxStateSize: settings.maxStateSize,
      created: createdAt(deps),
    },
    io,
  );
}

/** SOURCE_DATE_EPOCH (reproducible builds: same state, same digest), else now. */
function createdAt(deps: BundleDeps): string {
  const epoch = (deps.env ?? process.env).SOURCE_DATE_EPOCH;
  if (epoch !== undefined && /^\d+$/.test(epoch)) return new Date(Number(epoch) * 1000).toISOString().replace(/\.000Z$/, 'Z');
  return (deps.now ?? (() => new Date()))().toISOString();
}

async function list(format: string, settings: BundleSettings, io: CliIO): Promise<number> {
  if (!(LIST_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`bundle list: unknown format "${format}" (expected ${LIST_FORMATS.join(', ')})`, BUNDLE_USAGE);
  }
  const bundles: StoredBundle[] = [];
  // Listing a store that does not exist yet shows it empty rather than creating it.
  const store = (await isDirectory(settings.bundlesDir)) ? await openBundleStore(settings.bundlesDir) : undefined;
  for (const b of (await store?.list()) ?? []) bundles.push({ ...b, size: await totalSize(store!, b) });
  bundles.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  io.stdout(format === 'json' ? formatBundleJson(bundles) : formatBundleTable(bundles));
  return 0;
}

/** Manifest + config + layers: what a pull of the bundle downloads (the store's size is the manifest's). */
async function totalSize(store: BundleStore, bundle: StoredBundle): Promise<number> {
  try {
    const bytes = await store.readBlob(bundle.digest);
    const { manifest } = readBundleManifest(bytes);
    const blobs = new Map([manifest.config, ...manifest.layers].map((d) => [d.digest, d.size]));
    return [...blobs.values()].reduce((n, size) => n + size, bytes.byteLength);
  } catch {
    return bundle.size;
  }
}

async function transfer(sub: 'push' | 'pull', positionals: readonly string[], settings: BundleSettings, io: CliIO, deps: BundleDeps): Promise<number> {
  const remoteText = sub === 'push' ? positionals[1]! : positionals[0]!;
  let remote: OciReference;
  try {
    remote = parseOciReference(remoteText, { insecure: settings.insecure });
  } catch (err) {
    throw new UsageError(`bundle ${sub}: ${(err as Error).message}`, BUNDLE_USAGE);
  }
  const client = createRegistryClient({
    ...(settings.credentials !== undefined ? { credentials: settings.credentials } : {}),
    ...(deps.fetch !== undefined ? { fetch: deps.fetch } : {}),
  });
  if (sub === 'push' && !(await isDirectory(settings.bundlesDir))) {
    throw new UnknownBundleError(`bundle "${positionals[0]}" not found: there is no bundle store at ${settings.bundlesDir}`);
  }
  const store = await openBundleStore(settings.bundlesDir);
  const shown = bundleNameOf(remote);
  const action = sub === 'push' ? `push ${positionals[0]} to ${shown}` : `pull ${shown}`;
  try {
    return sub === 'push'
      ? await pushCommand({ name: positionals[0]!, remote, remoteText: shown, store, client }, io)
      : await pullCommand({ remote, store, client }, io);
  } catch (err) {
    if (err instanceof UnknownBundleError) throw err;
    io.stderr(`vexil: ${describeFailure(action, remote.registry, err)}\n`);
    return 1;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

function scrubbed(io: CliIO, scrub: (text: string) => string): CliIO {
  return {
    stdout: (text) => io.stdout(scrub(text)),
    stderr: (text) => io.stderr(scrub(text)),
    get cwd() {
      return io.cwd;
    },
  };
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
