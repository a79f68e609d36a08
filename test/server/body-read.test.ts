import { connect } from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { pino } from 'pino';
import { post, rawRequest, startTestServer } from './support.js';

/**
 * The request body reader (body.ts) on the evaluation fast path, over real sockets: bodies in
 * several pieces, non-ASCII and invalid UTF-8, and an upload that stops half way.
 */

const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'ü-user-😀', context: { city: 'Zürich', note: '"quoted" \\ \u2028' } };

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

t.test('a body in many small pieces reads as the same body in one', async (t) => {
  const { url, server } = await startTestServer(t);
  t.ok(server.fastPath, 'the fast path serves this');
  const whole = await post(`${url}/evaluate/v1/variant`, EVAL);
  t.equal(whole.status, 200);
  const text = JSON.stringify(EVAL);
  const bytes = Buffer.from(text, 'utf8');
  const pieces = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const u = new URL(url);
    const socket = connect(Number(u.port), u.hostname);
    let raw = '';
    socket.setEncoding('utf8').on('data', (d: string) => (raw += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = raw.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)?.[1]), text: rest.join('\r\n\r\n') });
    });
    socket.write(`POST /evaluate/v1/variant HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${bytes.length}\r\n\r\n`);
    // Split inside a multi-byte character too.
    let at = 0;
    const step = () => {
      if (at >= bytes.length) return;
      socket.write(bytes.subarray(at, at + 7));
      at += 7;
      setTimeout(step, 2);
    };
    step();
  });
  t.equal(pieces.status, 200);
  const a = JSON.parse(pieces.text) as Record<string, unknown>;
  const b = whole.body as Record<string, unknown>;
  for (const k of ['match', 'reason', 'variantKey', 'segmentKeys', 'flagKey']) t.same(a[k], b[k], k);
});

t.test('non-ASCII UTF-8 is read as such; invalid UTF-8 is refused', async (t) => {
  const { url } = await startTestServer(t);
  const ok = await post(`${url}/evaluate/v1/variant`, { ...EVAL, requestId: 'id-ü-😀' });
  t.equal(ok.status, 200);
  t.equal(ok.body.requestId, 'id-ü-😀', 'the text came through intact');
  const bad = await rawRequest(url, {
    method: 'POST',
    path: '/evaluate/v1/variant',
    headers: { 'Content-Type': 'application/json' },
    body: Buffer.concat([Buffer.from('{"flagKey":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","entityId":"u"}')]),
  });
  t.equal(bad.status, 400);
  t.same(JSON.parse(bad.text), { code: 3, message: 'request body is not valid UTF-8', details: [] });
});

t.test('an upload that stops half way is logged as a 400 "request aborted"', async (t) => {
  const { lines, logger } = capturingLogger();
  const { url } = await startTestServer(t, { logger, requests: 'all' });
  const u = new URL(url);
  await new Promise<void>((resolve) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write('POST /evaluate/v1/variant?abort-test HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"flagKey":"col');
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 50);
    });
  });
  const deadline = Date.now() + 5000;
  let line: Record<string, unknown> | undefined;
  while (line === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    line = lines.find((l) => l.msg === 'request' && l.url === '/evaluate/v1/variant?abort-test');
  }
  t.match(line, { level: 40, method: 'POST', status: 400 }, 'one request line, at warn');
  const ok = await post(`${url}/evaluate/v1/variant`, EVAL);
  t.equal(ok.status, 200, 'the server carries on');
});
