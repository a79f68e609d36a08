import { Writable } from 'node:stream';
import t from 'tap';
import { pino } from 'pino';
import { createLogger } from '../../src/logger.js';
import { requestLine, requestLineWriter, writeRequestLine } from '../../src/server/pipeline/request-log.js';
import { post, startTestServer } from './support.js';

t.test('request logs: one line per request, level by status, no secrets', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const { url } = await startTestServer(t, { logger: pino({ level: 'info' }, sink), requests: 'all' });
  const secret = 'Bearer sekrit-token-123';
  const ok = await fetch(`${url}/api/v1/namespaces/default/flags/color`, {
    headers: { Authorization: secret, Cookie: 'svc_client_token=sekrit-cookie', 'X-Request-Id': 'req-log-1' },
  });
  t.equal(ok.status, 200);
  await post(`${url}/evaluate/v1/variant`, { entityId: 'u' }, { 'X-Request-Id': 'req-log-2' });
  await new Promise((r) => setTimeout(r, 50));

  const requestLines = lines.filter((l) => l.msg === 'request');
  const first = requestLines.find((l) => l.reqId === 'req-log-1');
  t.match(first, { level: 30, method: 'GET', url: '/api/v1/namespaces/default/flags/color', status: 200 });
  t.equal(typeof first?.durationMs, 'number');
  const second = requestLines.find((l) => l.reqId === 'req-log-2');
  t.match(second, { level: 40, status: 400 }, '4xx logs at warn');
  const all = JSON.stringify(lines);
  t.notMatch(all, /sekrit/, 'no Authorization or cookie value in any log line');
});

t.test('log.requests: errors (the default) logs only 4xx and 5xx; none logs no request', async (t) => {
  for (const fastPath of [true, false]) {
    for (const requests of ['errors', 'none', undefined] as const) {
      const lines: Array<Record<string, unknown>> = [];
      const destination = { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) };
      const logger = createLogger({ level: 'info', encoding: 'json', destination });
      const { url } = await startTestServer(t, { logger, fastPath, ...(requests !== undefined ? { requests } : {}) });
      const label = `${requests ?? 'default'}, fast path ${fastPath}`;
      t.equal((await post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId: 'u' }, { 'X-Request-Id': 'ok-1' })).status, 200);
      t.equal((await post(`${url}/evaluate/v1/variant`, { entityId: 'u' }, { 'X-Request-Id': 'bad-1' })).status, 400);
      t.equal((await fetch(`${url}/api/v1/namespaces/default/flags/color`, { headers: { 'X-Request-Id': 'ok-2' } })).status, 200);
      t.equal((await fetch(`${url}/api/v1/namespaces/default/flags/nope`, { headers: { 'X-Request-Id': 'bad-2' } })).status, 404);
      await new Promise((r) => setTimeout(r, 20));
      const logged = lines.filter((l) => l.msg === 'request').map((l) => l.reqId);
      t.same(logged.sort(), requests === 'none' ? [] : ['bad-1', 'bad-2'], `${label}: ${logged.join(', ') || 'none'}`);
    }
  }
  const out: string[] = [];
  const logger = createLogger({ level: 'info', encoding: 'json', destination: { write: (s: string) => void out.push(s) } });
  const errorsOnly = requestLineWriter(logger, 'POST', 'errors');
  errorsOnly(200, '/x', 1, undefined, 'a');
  errorsOnly(404, '/x', 1, undefined, 'b');
  errorsOnly(503, '/x', 1, undefined, 'c');
  requestLineWriter(logger, 'POST', 'none')(500, '/x', 1, undefined, 'd');
  t.same(out.map((l) => JSON.parse(l).reqId), ['b', 'c'], 'the writer applies the same rule');
});

t.test('requestLineWriter writes the line writeRequestLine writes, byte for byte', async (t) => {
  const out: string[] = [];
  const destination = { write: (s: string) => void out.push(s) };
  const logger = createLogger({ level: 'info', encoding: 'json', destination });
  const write = requestLineWriter(logger, 'POST', 'all');
  const cases: Array<[number, string, number, string | undefined, string]> = [
    [200, '/evaluate/v1/variant', 123_456, '127.0.0.1', 'a7d0c1de-0000-4000-8000-000000000001'],
    [200, '/evaluate/v1/variant', 2_100_000, '127.0.0.1', 'id-2'],
    [404, '/evaluate/v1/variant?x="y"', 500_000_000, '::1', 'id-3'],
    [500, `/evaluate/v1/${'é'.repeat(2100)}`, 1e9, undefined, 'id-4'],
    [200, '/evaluate/v1/boolean', 0, '10.0.0.\u2028', 'id-5'],
    [200, '/evaluate/v1/boolean', 2_500, '127.0.0.1', 'id-6'],
    [200, '/evaluate/v1/boolean', 1_999_999_999_499, '127.0.0.1', 'id-7'],
    [304, '/internal/v1/evaluation/snapshot/namespace/default?code=abc&state=def&reference=main', 2_000, '127.0.0.1', 'id-8'],
  ];
  const noTime = (s: string) => s.replace(/"time":"[^"]*"/, '"time":""');
  for (const [status, url, nanos, remote, id] of cases) {
    write(status, url, nanos, remote, id);
    writeRequestLine(logger, requestLine('POST', url, status, nanos, remote), id);
    t.equal(out.length % 2, 0);
    const [mine, theirs] = out.slice(-2);
    t.equal(noTime(mine!), noTime(theirs!), `${status} ${url.slice(0, 30)}`);
    t.equal(JSON.parse(mine!).reqId, id);
  }
  const quiet = createLogger({ level: 'error', encoding: 'json', destination });
  const before = out.length;
  requestLineWriter(quiet, 'POST', 'all')(200, '/x', 1_000_000, '127.0.0.1', 'id');
  t.equal(out.length, before, 'below the level: nothing written');
});
