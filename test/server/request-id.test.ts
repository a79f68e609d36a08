/**
 * One id per request: when the server makes the id up (no sane X-Request-Id), the response body's
 * `requestId` is that same id, on the fast path and on the Koa path; an id in the body is echoed,
 * and an incoming X-Request-Id (not a UUID the server made) does not name the body.
 */
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { createLogger } from '../../src/logger.js';
import { startTestServer } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const fastPath of [true, false]) {
  t.test(`${fastPath ? 'fast path' : 'Koa path'}: body, header and log line share the generated id`, async (t) => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const { server } = await startTestServer(t, {
      logger: createLogger({ level: 'info', encoding: 'json', destination: sink }),
      fastPath,
      requests: 'all',
    });
    t.equal(server.fastPath, fastPath);
    await check(t, server.url, lines);
  });
}

async function check(t: Test, base: string, lines: Array<Record<string, unknown>>): Promise<void> {
  for (const kind of ['variant', 'boolean', 'batch'] as const) {
    const body = kind === 'batch' ? { requests: [{ flagKey: 'color', entityId: 'u1' }] } : { flagKey: kind === 'variant' ? 'color' : 'new-checkout', entityId: 'u1' };
    const res = await fetch(`${base}/evaluate/v1/${kind}`, { method: 'POST', body: JSON.stringify(body) });
    t.equal(res.status, 200, kind);
    const header = res.headers.get('x-request-id');
    const json = (await res.json()) as { requestId: string };
    t.match(header, UUID, `${kind}: generated X-Request-Id`);
    t.equal(json.requestId, header, `${kind}: the body names the same id`);
    await new Promise((r) => setTimeout(r, 20));
    t.ok(lines.some((l) => l.msg === 'request' && l.reqId === header), `${kind}: the log line names it too`);
  }
  const echoed = await fetch(`${base}/evaluate/v1/variant`, { method: 'POST', body: JSON.stringify({ flagKey: 'color', entityId: 'u1', requestId: 'mine' }) });
  t.equal(((await echoed.json()) as { requestId: string }).requestId, 'mine', 'a body requestId is echoed');
  const incoming = await fetch(`${base}/evaluate/v1/variant`, { method: 'POST', headers: { 'X-Request-Id': 'trace-7' }, body: JSON.stringify({ flagKey: 'color', entityId: 'u1' }) });
  t.equal(incoming.headers.get('x-request-id'), 'trace-7');
  t.match(((await incoming.json()) as { requestId: string }).requestId, UUID, 'an incoming header id does not name the body: a fresh UUID does');
}
