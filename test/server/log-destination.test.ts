import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { pino } from 'pino';
import { BufferedLineDestination, createLogger } from '../../src/logger.js';
import { requestLine, writeRequestLine } from '../../src/server/pipeline/request-log.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
const CHILD = fileURLToPath(new URL('./fixtures/log-child/write-and-exit.ts', import.meta.url));

function tempFile(t: { teardown(fn: () => void): void }): { path: string; fd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  t.teardown(() => closeSync(fd));
  return { path, fd };
}

t.test('deferred lines wait for a full batch; an ordinary line goes out at once, after them', async (t) => {
  const { path, fd } = tempFile(t);
  const dest = new BufferedLineDestination({ fd, batchChars: 100 });
  t.teardown(() => dest.end());
  dest.writeDeferred('{"a":1}\n');
  dest.writeDeferred('{"a":2}\n');
  t.equal(readFileSync(path, 'utf8'), '', 'held back while the batch has room');
  t.equal(dest.pendingChars, 16);
  dest.write('{"now":true}\n');
  t.equal(readFileSync(path, 'utf8'), '{"a":1}\n{"a":2}\n{"now":true}\n', 'order kept');
  for (let i = 0; i < 20; i++) dest.writeDeferred(`{"i":"${String(i).padStart(2, '0')}"}\n`);
  const written = readFileSync(path, 'utf8');
  t.ok(written.length > 29, 'a full batch was written');
  t.equal((written.length - 29) % 11, 0, 'whole lines only');
  t.ok(written.endsWith('\n'), 'batches end on a line boundary');
  dest.flushSync();
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  t.equal(lines.length, 23);
  t.same(lines.slice(3).map((l) => Number(JSON.parse(l).i)), Array.from({ length: 20 }, (_, i) => i));
});

t.test('non-ASCII text and lines longer than a batch arrive intact and in order', async (t) => {
  const { path, fd } = tempFile(t);
  const dest = new BufferedLineDestination({ fd, batchChars: 64 });
  t.teardown(() => dest.end());
  const lines = ['{"u":"é 😀"}\n', `{"long":"${'x'.repeat(500)}"}\n`, '{"b":1}\n', `{"long":"${'ü'.repeat(40)}"}\n`];
  dest.writeDeferred(lines[0]!);
  dest.writeDeferred(lines[1]!);
  dest.writeDeferred(lines[2]!);
  dest.write(lines[3]!);
  t.equal(readFileSync(path, 'utf8'), lines.join(''));
});

t.test('deferred lines are written together at the end of the event-loop turn', async (t) => {
  const { path, fd } = tempFile(t);
  const dest = new BufferedLineDestination({ fd });
  t.teardown(() => dest.end());
  dest.writeDeferred('{"turn":1}\n');
  dest.writeDeferred('{"turn":2}\n');
  t.equal(readFileSync(path, 'utf8'), '', 'not during the turn');
  await new Promise((r) => setImmediate(r));
  t.equal(readFileSync(path, 'utf8'), '{"turn":1}\n{"turn":2}\n', 'right after it, in one batch');
  t.equal(dest.pendingChars, 0);
});

t.test('soon after a write, deferred lines wait out the interval and then go out together', async (t) => {
  const { path, fd } = tempFile(t);
  const dest = new BufferedLineDestination({ fd, minWriteIntervalMs: 500 });
  t.teardown(() => dest.end());
  const turn = () => new Promise((r) => setImmediate(r));
  dest.writeDeferred('{"n":1}\n');
  await turn();
  t.equal(readFileSync(path, 'utf8'), '{"n":1}\n', 'after a quiet spell: at the end of the turn');
  dest.writeDeferred('{"n":2}\n');
  await turn();
  dest.writeDeferred('{"n":3}\n');
  await turn();
  t.equal(readFileSync(path, 'utf8'), '{"n":1}\n', 'held back within the interval');
  t.equal(dest.pendingChars, 16);
  const deadline = Date.now() + 10_000;
  while (dest.pendingChars > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n', 'then written in one batch, in order');
  dest.write('{"now":true}\n');
  t.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n{"now":true}\n', 'an ordinary line is never held back');
});

t.test('request lines carry exactly the fields and bytes pino writes for the same object', async (t) => {
  for (const encoding of ['json', 'console'] as const) {
    const chunks: string[] = [];
    const log = createLogger({ level: 'info', encoding, destination: { write: (s: string) => void chunks.push(s) } });
    const cases = [
      { line: requestLine('POST', '/evaluate/v1/variant?q="x"\\é\u2028', 200, 1_234_500, '127.0.0.1'), reqId: 'r-1' },
      { line: requestLine('GET', `/${'a'.repeat(3000)}`, 404, 500_000_000, undefined), reqId: 'r-2' },
      { line: requestLine('POST', '/evaluate/v1/batch', 503, 2e9, '::1'), reqId: undefined },
    ];
    for (const { line, reqId } of cases) {
      const bound = reqId === undefined ? log.child({ reqId: 'child-bound' }) : log;
      chunks.length = 0;
      writeRequestLine(bound, line, reqId);
      const level = line.status >= 500 ? 'error' : line.status >= 400 ? 'warn' : 'info';
      bound[level](reqId === undefined ? line : { reqId, ...line }, 'request');
      t.equal(chunks.length, 2, `${encoding}: one line each`);
      const strip = (s: string) => s.replace(/"time":"[^"]+"/, '"time":"T"').replace(/\d\d:\d\d:\d\d\.\d\d\d/, 'T');
      t.equal(strip(chunks[0]!), strip(chunks[1]!), `${encoding} ${line.status}: same text as pino's`);
    }
  }
  const quiet: string[] = [];
  const warnOnly = createLogger({ level: 'warn', encoding: 'json', destination: { write: (s: string) => void quiet.push(s) } });
  writeRequestLine(warnOnly, requestLine('POST', '/x', 200, 1_000_000, undefined), 'a');
  writeRequestLine(warnOnly, requestLine('POST', '/x', 400, 1_000_000, undefined), 'b');
  t.same(quiet.map((l) => JSON.parse(l).reqId), ['b'], 'the level still filters request lines');
});

t.test('a logger not made by createLogger gets the same fields the ordinary way', async (t) => {
  const chunks: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void chunks.push(s) });
  writeRequestLine(log, requestLine('POST', '/evaluate/v1/variant', 200, 2_000_000, '127.0.0.1'), 'plain-1');
  t.match(JSON.parse(chunks[0]!), { level: 30, reqId: 'plain-1', method: 'POST', url: '/evaluate/v1/variant', status: 200, durationMs: 2, remoteAddress: '127.0.0.1', msg: 'request' });
});

function runChild(args: object): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--import=${TSX}`, CHILD, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

t.test('every buffered request line reaches standard output when the process ends', async (t) => {
  for (const exit of ['exit', 'throw', 'natural'] as const) {
    const lines = 1000;
    const { code, stdout } = await runChild({ lines, exit });
    t.equal(code, exit === 'throw' ? 1 : 0, `${exit}: exit code`);
    const parsed = stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    t.equal(parsed[0]?.msg, 'starting', `${exit}: the ordinary line first`);
    const requests = parsed.filter((l) => l.msg === 'request');
    t.equal(requests.length, lines, `${exit}: every request line, each whole JSON`);
    t.same(
      requests.map((l) => l.reqId),
      Array.from({ length: lines }, (_, i) => `req-${i}`),
      `${exit}: in order`,
    );
    t.match(requests[7], { level: 'warn', method: 'POST', url: '/evaluate/v1/variant?i=7', status: 404, remoteAddress: '127.0.0.1' });
  }
});
