import { Writable } from 'node:stream';
import t from 'tap';
import { pino } from 'pino';
import { post, startTestServer } from './support.js';

t.test('request logs: one line per request, level by status, no secrets', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const { url } = await startTestServer(t, { logger: pino({ level: 'info' }, sink) });
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
