/**
 * Live updates from a real `vexil serve` process with `server.workers: 2`: streams opened on
 * fresh connections land on both workers; every worker loads the state itself and streams its
 * own snapshots, and since an ETag depends only on the reference and the namespace's content,
 * both workers give a namespace the same one: every client gets the same first state, every client
 * gets an edited file's change, and a client reconnecting to either worker with Last-Event-ID
 * gets nothing resent. SIGTERM ends every stream cleanly and the process exits 0.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { StreamClient } from '../support/stream-client.js';
import { serveCli } from './run-cli.js';

const STREAMS_FIXTURE = new URL('../server/fixtures/streams/', import.meta.url);
const SSE = '/evaluate/v1/namespaces/default/stream';
const NDJSON = '/client/v2/environments/default/namespaces/default/stream';

t.test('workers: 2: both workers stream, every client gets each change, Last-Event-ID holds across workers, SIGTERM ends them', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'vexil-streams-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  cpSync(STREAMS_FIXTURE, state, { recursive: true });
  const { child, listening, logs } = await serveCli(t, ['serve'], {
    env: { VEXIL_SERVER_HTTP_PORT: '0', VEXIL_SERVER_WORKERS: '2', VEXIL_STORAGE_LOCAL_PATH: state, VEXIL_LOG_REQUESTS: 'all' },
  });
  const url = String(listening.url);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const clients: StreamClient[] = [];
  t.teardown(() => clients.forEach((c) => c.close()));
  const open = async (protocol: 'sse' | 'ndjson', headers: Record<string, string> = {}) => {
    const c = await StreamClient.open(protocol, `${url}${protocol === 'sse' ? SSE : NDJSON}`, headers);
    clients.push(c);
    return c;
  };
  const stateIds = (c: StreamClient): string[] =>
    c.protocol === 'sse' ? c.events.map((e) => e.id!) : c.lines().map((l) => (l as { result: { flags: Array<{ description?: string }> } }).result.flags[0]!.description!);
  const count = (c: StreamClient) => (c.protocol === 'sse' ? c.events.length : c.rawLines.length);

  const first: StreamClient[] = [];
  for (let i = 0; i < 8; i++) first.push(await open(i % 4 === 3 ? 'ndjson' : 'sse'));
  await Promise.all(first.map((c) => c.until(() => count(c) === 1, 'the first state')));
  const streamRequests = logs.filter((l) => l.msg === 'request' && (l.url === SSE || l.url === NDJSON));
  t.equal(new Set(streamRequests.map((l) => l.pid)).size, 2, 'the streams were opened on both workers');
  const sse = first.filter((c) => c.protocol === 'sse');
  t.equal(new Set(sse.map((c) => c.events[0]!.id)).size, 1, 'both workers give the namespace the same ETag');

  const file = join(state, 'features.yml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('description: edition 0', 'description: edition 1'));
  await Promise.all(first.map((c) => c.until(() => count(c) === 2, 'the change')));
  const changed = sse[0]!.events[1]!.id!;
  t.ok(sse.every((c) => c.events[1]!.id === changed), 'every SSE client has the new ETag');
  t.ok(
    first.filter((c) => c.protocol === 'ndjson').every((c) => stateIds(c)[1] === 'edition 1'),
    'every NDJSON client has the new document',
  );

  // Reconnections with the ETag just received, spread over both workers: nothing is resent.
  const reconnected: StreamClient[] = [];
  for (let i = 0; i < 4; i++) reconnected.push(await open('sse', { 'last-event-id': changed }));
  await Promise.all(reconnected.map((c) => c.until(() => c.comments.includes('connected'), 'connected')));
  writeFileSync(file, readFileSync(file, 'utf8').replace('description: edition 1', 'description: edition 2'));
  await Promise.all(reconnected.map((c) => c.until(() => c.events.length >= 1, 'the next change')));
  await sse[0]!.until(() => sse[0]!.events.length === 3);
  const latest = sse[0]!.events[2]!.id!;
  t.ok(
    reconnected.every((c) => c.events.length === 1 && c.events[0]!.id === latest),
    'each reconnected client’s first event is the next change, whichever worker it reached',
  );

  child.kill('SIGTERM');
  const endings = await Promise.all(clients.map((c) => c.ended()));
  t.ok(
    endings.every((e) => e === 'end'),
    'every stream ended cleanly',
  );
  t.equal(await exited, 0, 'exit 0');
});
