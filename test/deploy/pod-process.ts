/**
 * Runs a LocalPod (local-pod.ts) as the kubelet would run its container, as far as one machine
 * allows: `node bin/vexil.js <args>` (src/cli/main.ts under tsx here) with only the pod's
 * environment (plus PATH, HOME=/ as for a uid without a passwd entry, and TMPDIR on the pod's /tmp
 * volume) and, when this process is root, the pod's securityContext: in a private mount namespace
 * (`unshare --mount`) the root filesystem is remounted read-only, the folders of the writable
 * volumes are bind-mounted writable (owned by uid/gid 1000, as fsGroup makes them), and vexil runs
 * as uid 1000 (`setpriv`). A write anywhere else then fails with EROFS, as in the cluster.
 * The test runner's own NODE_OPTIONS hook (tap's process info) is removed from the environment.
 * Not root (a developer's machine): the same command and environment, without those two
 * restrictions (`isolated` is false; the test says so).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { REPO, type LocalPod } from './local-pod.js';

/** The image's user (Dockerfile `USER 1000:1000`, the Deployment's runAsUser/runAsGroup/fsGroup). */
export const POD_UID = 1000;

const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
const MAIN = join(REPO, 'src/cli/main.ts');

/** Why the read-only root and the non-root user cannot be applied here (undefined: they can). */
export function isolationUnavailableReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'running the pod with a read-only root filesystem as uid 1000 needs root (unshare --mount, setpriv)';
  for (const tool of ['unshare', 'setpriv']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) return `${tool} (util-linux) is not installed`;
  }
  return undefined;
}

export interface PodProcess {
  readonly url: string;
  /** True when the root filesystem was read-only and vexil ran as uid 1000. */
  readonly isolated: boolean;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Starts the pod's vexil; resolves at its `listening` log line, rejects with stderr if it exits first. */
export function startPodProcess(t: Teardown, pod: LocalPod, overrides: Readonly<Record<string, string>>): Promise<PodProcess> {
  const isolated = isolationUnavailableReason() === undefined;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/',
    ...pod.env,
    TMPDIR: pod.localPath('/tmp'),
    ...overrides,
  };
  // The test runner adds its own hook to every node it spawns (NODE_OPTIONS); the pod has none.
  const unset = ['NODE_OPTIONS', ...Object.keys(process.env).filter((k) => k.startsWith('_TAPJS_'))].filter((k) => !(k in pod.env));
  const node = ['env', ...unset.flatMap((k) => ['-u', k]), process.execPath, `--import=${TSX}`, MAIN, ...pod.args];
  let argv = node;
  if (isolated) {
    chmodSync(pod.root, 0o755);
    const writable = [...pod.mounts.values()].filter((m) => !m.readOnly).map((m) => m.dir);
    for (const dir of writable) chownSync(dir, POD_UID, POD_UID);
    // Each writable volume becomes a mount of its own, so it stays writable under the read-only root.
    const script = [
      'set -e',
      ...writable.map((_, i) => `mount --bind "\${${i + 1}}" "\${${i + 1}}"`),
      'mount -o remount,bind,ro /',
      `shift ${writable.length}`,
      `exec setpriv --reuid=${POD_UID} --regid=${POD_UID} --clear-groups -- "$@"`,
    ].join('\n');
    argv = ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh', ...writable, ...node];
  }
  const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (entry.msg !== 'listening') return;
      resolve({
        url: String(entry.url),
        isolated,
        stop() {
          // `exec` all the way down (sh, setpriv, env): the child is vexil itself and gets the signal.
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`vexil exited ${code} before listening: ${stderr}`)));
  });
}
