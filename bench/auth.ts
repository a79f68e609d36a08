/**
 * `npm run bench -- auth`: evaluation throughput of `vexil serve` with `authentication.required:
 * true` (a token checked on every request, through the in-memory lookup cache) against the same
 * server without authentication, in the same run. Target: required >= 0.9x open. A third server
 * with `cache_ttl: 0` (a SQLite lookup per request) is measured for information. A fourth server
 * takes `Authorization: JWT <token>` (bench/auth-jwt.ts): target JWT >= 0.8x open.
 *
 * Every server is the compiled build in its own process, SQLite store in a temp folder, info logs
 * to a file; the servers are measured in turns (open, cached, uncached, open, ...) and the median
 * of the rounds is compared, so drift of the machine hits every configuration alike.
 *
 * The load generator is this same file run as a script (autocannon in a separate process, with
 * the Authorization header the shared autocannon worker does not send).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareJwtBench, TARGET_JWT } from './auth-jwt.js';
import { REPO, type BenchBuild } from './build.js';
import { median, fmtInt, fmtRatio, verdict } from './stats.js';

export interface AuthBenchOptions {
  connections: number;
  durationSec: number;
  warmupSec: number;
  rounds: number;
}

export const AUTH_DEFAULTS: AuthBenchOptions = { connections: 50, durationSec: 10, warmupSec: 2, rounds: 3 };
export const AUTH_QUICK: AuthBenchOptions = { connections: 50, durationSec: 3, warmupSec: 1, rounds: 1 };
export const TARGET_AUTH = 0.9;

const TOKEN = 'bench-token-0123456789abcdefghijklmnopqrstuvwxyz';
const BODY = JSON.stringify({ namespaceKey: 'default', flagKey: 'flag1', entityId: 'user-42', context: { fizz: 'buzz' } });

interface LoadLine {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  totalRequests: number;
  non2xx: number;
  errors: number;
}

interface Variant {
  name: string;
  label: string;
  yaml: string;
  /** The Authorization header sent, if any. */
  authorization?: string;
}

const BEARER = `Bearer ${TOKEN}`;

const TOKEN_VARIANTS: readonly Variant[] = [
  { name: 'open', label: 'authentication off', yaml: 'authentication:\n  required: false\n' },
  {
    name: 'cached',
    label: 'required, token lookup cached (cache_ttl 5s, the default)',
    yaml: `authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n      bootstrap:\n        token: ${TOKEN}\n`,
    authorization: BEARER,
  },
  {
    name: 'uncached',
    label: 'required, no cache (cache_ttl 0: a SQLite lookup per request)',
    yaml: `authentication:\n  required: true\n  cache_ttl: 0s\n  methods:\n    token:\n      enabled: true\n      bootstrap:\n        token: ${TOKEN}\n`,
    authorization: BEARER,
  },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function startServer(build: BenchBuild, dir: string, variant: Variant): Promise<{ child: ChildProcess; url: string }> {
  const home = join(dir, variant.name);
  mkdirSync(join(home, 'state'), { recursive: true });
  writeFileSync(join(home, 'state/features.yml'), readFileSync(join(REPO, 'bench/fixtures/features.yml')));
  writeFileSync(
    join(home, 'config.yml'),
    `server:\n  host: 127.0.0.1\n  http_port: 0\nlog:\n  level: info\n  encoding: json\ndata_dir: ./data\nstorage:\n  local:\n    path: ./state\n${variant.yaml}`,
  );
  const logFile = join(home, 'vexil.log');
  const fd = openSync(logFile, 'w');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
  env.NODE_OPTIONS = '';
  const child = spawn(process.execPath, [join(build.root, 'src/cli/main.js'), 'serve', '--config', join(home, 'config.yml')], {
    cwd: home,
    env,
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const end = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vexil serve (${variant.name}) exited (${child.exitCode}): ${stderr}`);
    const listening = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; url?: string })
      .find((e) => e.msg === 'listening');
    if (listening?.url) return { child, url: listening.url };
    if (Date.now() > end) throw new Error(`vexil serve (${variant.name}) did not start: ${stderr}`);
    await sleep(50);
  }
}

function runLoad(build: BenchBuild, url: string, authorization: string | undefined, connections: number, durationSec: number): Promise<LoadLine> {
  const args = { url, connections, durationSec, body: BODY, ...(authorization !== undefined ? { authorization } : {}) };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(build.root, 'bench/auth.js'), JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) reject(new Error(`auth load generator failed (${code}): ${err || out}`));
      else resolve(JSON.parse(line) as LoadLine);
    });
  });
}

export interface AuthBenchReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runAuthBench(build: BenchBuild, opts: AuthBenchOptions, log: (s: string) => void): Promise<AuthBenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-auth-'));
  const servers: Array<{ child: ChildProcess; url: string }> = [];
  try {
    const jwt = await prepareJwtBench(dir);
    const VARIANTS: readonly Variant[] = [
      ...TOKEN_VARIANTS,
      { name: 'jwt', label: 'required, Authorization: JWT (ES256, verified-token cache)', yaml: jwt.yaml, authorization: jwt.authorization },
    ];
    for (const v of VARIANTS) servers.push(await startServer(build, dir, v));
    for (const [i, v] of VARIANTS.entries()) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (v.authorization !== undefined) headers.authorization = v.authorization;
      const probe = await fetch(`${servers[i]!.url}/evaluate/v1/variant`, { method: 'POST', headers, body: BODY });
      const text = await probe.text();
      if (probe.status !== 200) throw new Error(`${v.name}: vexil answered ${probe.status}: ${text}`);
      if (v.authorization !== undefined) {
        const refused = await fetch(`${servers[i]!.url}/evaluate/v1/variant`, { method: 'POST', body: BODY });
        if (refused.status !== 401) throw new Error(`${v.name}: a request without a token was not refused (${refused.status})`);
      }
      if (opts.warmupSec > 0) await runLoad(build, `${servers[i]!.url}/evaluate/v1/variant`, v.authorization, opts.connections, opts.warmupSec);
    }
    const results: LoadLine[][] = VARIANTS.map(() => []);
    for (let round = 0; round < opts.rounds; round++) {
      for (const [i, v] of VARIANTS.entries()) {
        const r = await runLoad(build, `${servers[i]!.url}/evaluate/v1/variant`, v.authorization, opts.connections, opts.durationSec);
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${v.name}: ${r.non2xx} non-2xx and ${r.errors} errors under load`);
        results[i]!.push(r);
        log(`  round ${round + 1}/${opts.rounds} ${v.name}: ${fmtInt(r.reqPerSec)} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`);
      }
    }
    const rps = results.map((rs) => median(rs.map((r) => r.reqPerSec)));
    const p99 = results.map((rs) => median(rs.map((r) => r.p99Ms)));
    const ratio = rps[1]! / rps[0]!;
    const ok = ratio >= TARGET_AUTH;
    const jwtRatio = rps[3]! / rps[0]!;
    const jwtOk = jwtRatio >= TARGET_JWT;
    const markdown = [
      `autocannon, ${opts.connections} connections, ${opts.rounds} round(s) of ${opts.durationSec} s per server in turns (after a ${opts.warmupSec} s warm-up each), POST /evaluate/v1/variant; medians. One process per server, SQLite authentication store.`,
      '',
      '| server | req/s | p99 | × off |',
      '|---|---:|---:|---:|',
      ...VARIANTS.map((v, i) => `| ${v.label} | ${fmtInt(rps[i]!)} | ${p99[i]} ms | ${fmtRatio(rps[i]! / rps[0]!)} |`),
      '',
      `required (cached) / off = **${fmtRatio(ratio)}** (target ≥ ${TARGET_AUTH}×): ${verdict(ok)}`,
      `JWT / off = **${fmtRatio(jwtRatio)}** (target ≥ ${TARGET_JWT}×): ${verdict(jwtOk)}`,
    ].join('\n');
    return {
      markdown,
      verdicts: [
        { target: `auth: required (token lookup cached) ≥ ${TARGET_AUTH}× authentication off`, ok },
        { target: `auth: JWT (verified-token cache) ≥ ${TARGET_JWT}× authentication off`, ok: jwtOk },
      ],
    };
  } finally {
    for (const s of servers) await stop(s.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** As a script: one autocannon run (argv[2] = JSON {url, connections, durationSec, body, authorization?}), one JSON line out. */
async function loadGenerator(): Promise<void> {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    total: number;
  }
  type Autocannon = (o: Record<string, unknown>) => Promise<{ requests: Histogram; latency: Histogram; errors: number; non2xx: number }>;
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const a = JSON.parse(process.argv[2]!) as { url: string; connections: number; durationSec: number; body: string; authorization?: string };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (a.authorization) headers.authorization = a.authorization;
  const r = await autocannon({ url: a.url, connections: a.connections, duration: a.durationSec, method: 'POST', headers, body: a.body });
  const line: LoadLine = {
    reqPerSec: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    totalRequests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2]?.startsWith('{')) await loadGenerator();
