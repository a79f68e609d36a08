/**
 * A real Azure Blob Storage server on loopback for the object-store tests: npm `azurite` (a
 * devDependency, so these tests never skip), blob service only, run as a child process, plus a
 * client for the test side (writing blobs).
 *
 * - In memory (`--inMemoryPersistence`): nothing is written to disk; stop() loses the blobs, so
 *   restart() writes back the ones it held (same names and bytes, new ETags as on a real restore).
 * - Port 0 at first start (the real port is read from its "listens on" line); restart() reuses it.
 * - `--skipApiVersionCheck`: the SDK may send an x-ms-version newer than this Azurite knows.
 * - `--disableTelemetry`: this machine has no network, and tests send nothing anywhere.
 * - Started with `node <azurite>/dist/src/blob/main.js`, never through npx (killing an npx PID
 *   orphans the server). SharedKey auth is enforced: the well-known devstoreaccount1 key below.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { Teardown } from './git-repo.js';

/** Azurite's fixed development account and its published key (not a secret). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const AZURITE_BLOB_MAIN = join(dirname(createRequire(import.meta.url).resolve('azurite/package.json')), 'dist', 'src', 'blob', 'main.js');

export interface AzuriteServerOptions {
  /** Containers created at start (default ['flags']). */
  readonly containers?: readonly string[];
}

export interface AzuriteTestServer {
  /** http://127.0.0.1:PORT/devstoreaccount1 (the blob service URL, path-style account). */
  readonly endpoint: string;
  readonly port: number;
  readonly running: boolean;
  /** `DefaultEndpointsProtocol=http;AccountName=…;AccountKey=…;BlobEndpoint=…;` */
  connectionString(key?: string): string;
  /** Writes a blob; returns its ETag without quotes. */
  put(container: string, name: string, body: string | Uint8Array): Promise<string>;
  remove(container: string, name: string): Promise<void>;
  /** Kills the server (the container becomes unreachable). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the containers and blobs it had. */
  restart(): Promise<void>;
}

function launch(port: number): Promise<{ child: ChildProcess; port: number }> {
  const args = [AZURITE_BLOB_MAIN, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--inMemoryPersistence', '--silent', '--disableTelemetry', '--skipApiVersionCheck'];
  // NODE_OPTIONS replaced: the test runner's loader hooks have no business in Azurite.
  const child = spawn(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`azurite did not start within 30 s: ${err || out}`));
    }, 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`azurite exited before listening (${code ?? signal}): ${err || out}`));
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startAzuriteServer(t: Teardown, opts: AzuriteServerOptions = {}): Promise<AzuriteTestServer> {
  const containers = opts.containers ?? ['flags'];
  let { child, port } = await launch(0);
  let running = true;
  t.teardown(() => kill(child));
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  // Retries off: a test that writes while the server is down should fail at once.
  const client = new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY), { retryOptions: { maxTries: 1 } });
  /** What the server holds, to write back after a restart (memory persistence loses it). */
  const held = new Map<string, Map<string, Uint8Array>>();
  const createContainers = async () => {
    for (const c of containers) await client.getContainerClient(c).createIfNotExists();
  };
  await createContainers();
  const server: AzuriteTestServer = {
    endpoint,
    port,
    get running() {
      return running;
    },
    connectionString: (key = AZURITE_KEY) => `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=${endpoint};`,
    async put(container, name, body) {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const res = await client.getContainerClient(container).getBlockBlobClient(name).upload(bytes, bytes.byteLength);
      let blobs = held.get(container);
      if (blobs === undefined) held.set(container, (blobs = new Map()));
      blobs.set(name, bytes);
      return (res.etag ?? '').replace(/^"(.*)"$/, '$1');
    },
    async remove(container, name) {
      await client.getContainerClient(container).deleteBlob(name);
      held.get(container)?.delete(name);
    },
    async stop() {
      running = false;
      await kill(child);
    },
    async restart() {
      if (running) return;
      ({ child, port } = await launch(port));
      running = true;
      await createContainers();
      for (const [container, blobs] of held) {
        for (const [name, bytes] of blobs) await client.getContainerClient(container).getBlockBlobClient(name).upload(bytes, bytes.byteLength);
      }
    },
  };
  return server;
}
