/**
 * A real S3-protocol server on loopback for the object-store tests: npm `s3rver` (a devDependency,
 * so these tests never skip) run as a child process in a temp folder, plus an S3 client for the
 * test side (writing objects).
 *
 * - The child runs with NODE_OPTIONS=--openssl-legacy-provider: s3rver builds listing continuation
 *   tokens with DES, which OpenSSL 3 refuses otherwise (paginated listings would fail with 500).
 * - Started with `node <s3rver>/bin/s3rver.js`, never through npx: killing an npx PID orphans the server.
 * - s3rver only accepts the credentials S3RVER/S3RVER (S3RVER_CREDENTIALS).
 * - `stop()` simulates an unreachable bucket; `restart()` brings it back on the same port with
 *   the same objects.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Teardown } from './git-repo.js';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

const S3RVER_BIN = join(dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin', 's3rver.js');

export interface S3ServerOptions {
  /** Buckets created at start (default ['flags']); names are 3–63 characters. */
  readonly buckets?: readonly string[];
}

export interface S3TestServer {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  readonly port: number;
  /** s3rver's data folder (removed at teardown). */
  readonly dir: string;
  /** False between stop() and restart(). */
  readonly running: boolean;
  /** A client with the settings s3rver needs (path style, checksums only when required). */
  client(credentials?: { accessKeyId: string; secretAccessKey: string }): S3Client;
  /** Writes an object; returns its ETag without quotes. */
  put(bucket: string, key: string, body: string | Uint8Array): Promise<string>;
  remove(bucket: string, key: string): Promise<void>;
  /** Kills the server (the bucket becomes unreachable); objects stay on disk. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same objects. */
  restart(): Promise<void>;
}

function launch(dir: string, port: number, buckets: readonly string[]): Promise<{ child: ChildProcess; port: number }> {
  const args = [S3RVER_BIN, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '-s'];
  for (const b of buckets) args.push('--configure-bucket', b);
  // NODE_OPTIONS replaced, not extended: the test runner's loader hooks have no business in s3rver.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, NODE_OPTIONS: '--openssl-legacy-provider' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`s3rver did not start within 15 s: ${err || out}`));
    }, 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /S3rver listening on 127\.0\.0\.1:(\d+)/.exec(out);
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
      reject(new Error(`s3rver exited before listening (${code ?? signal}): ${err || out}`));
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

export async function startS3Server(t: Teardown, opts: S3ServerOptions = {}): Promise<S3TestServer> {
  const buckets = opts.buckets ?? ['flags'];
  const dir = mkdtempSync(join(tmpdir(), 'vexil-s3rver-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let { child, port } = await launch(dir, 0, buckets);
  let running = true;
  const clients: S3Client[] = [];
  t.teardown(async () => {
    for (const c of clients) c.destroy();
    await kill(child);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const makeClient = (credentials: { accessKeyId: string; secretAccessKey: string } = S3RVER_CREDENTIALS) => {
    const c = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    clients.push(c);
    return c;
  };
  let writer: S3Client | undefined;
  const server: S3TestServer = {
    endpoint,
    port,
    dir,
    get running() {
      return running;
    },
    client: makeClient,
    async put(bucket, key, body) {
      writer ??= makeClient();
      const res = await writer.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      return (res.ETag ?? '').replace(/^"(.*)"$/, '$1');
    },
    async remove(bucket, key) {
      writer ??= makeClient();
      await writer.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async stop() {
      running = false;
      await kill(child);
    },
    async restart() {
      if (running) return;
      ({ child, port } = await launch(dir, port, buckets));
      running = true;
    },
  };
  return server;
}

/**
 * The AWS variables the tests control, everything else about AWS cleared: credentials S3RVER from
 * the environment, no shared config files (a developer's ~/.aws must not leak in), no instance
 * metadata lookups, no SDK Node-version warning. Restored at teardown.
 */
export function useAwsEnv(t: Teardown, vars: Record<string, string | undefined> = {}): void {
  const wanted: Record<string, string | undefined> = {
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_REGION: undefined,
    AWS_DEFAULT_REGION: undefined,
    AWS_CONFIG_FILE: join(tmpdir(), 'vexil-no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(tmpdir(), 'vexil-no-aws-credentials'),
    AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
    AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...vars,
  };
  const saved = new Map<string, string | undefined>();
  for (const [k, v] of Object.entries(wanted)) {
    saved.set(k, process.env[k]);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  t.teardown(() => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}

export interface CredentialServer {
  /** For AWS_CONTAINER_CREDENTIALS_FULL_URI (the SDK accepts plain HTTP on loopback). */
  readonly uri: string;
  /** Credential documents served so far. */
  readonly served: number;
  /** The access key id handed out from now on (rotation, revocation). */
  setAccessKeyId(id: string): void;
}

/**
 * A container-credentials endpoint (what ECS/EKS provide) on loopback: credentials that expire a
 * minute ahead, so the SDK fetches them again on each use and a changed key reaches the client
 * while it runs, as a rotated or revoked role would.
 */
export async function startCredentialServer(t: Teardown, accessKeyId: string = S3RVER_CREDENTIALS.accessKeyId): Promise<CredentialServer> {
  let id = accessKeyId;
  let served = 0;
  const server = createServer((_req, res) => {
    served++;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        AccessKeyId: id,
        SecretAccessKey: S3RVER_CREDENTIALS.secretAccessKey,
        Token: 'test-session-token',
        Expiration: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    uri: `http://127.0.0.1:${port}/credentials`,
    get served() {
      return served;
    },
    setAccessKeyId(next) {
      id = next;
    },
  };
}
