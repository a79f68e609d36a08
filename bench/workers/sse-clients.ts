/**
 * The clients of the streams benchmark (bench/streams.ts), in their own process so that the
 * server's figures are its own: `connections` Server-Sent Events streams on plain TCP sockets
 * (a GET and a scan of the bytes for `data: `; no EventSource, whose per-connection cost would
 * measure the client), opened in batches, each until its first state event.
 *
 * Then, told `go` by the parent (over IPC, after it has sampled the server's memory), it makes
 * `changes` state changes itself, one at a time: it rewrites one state file and times, for every
 * connection, the arrival of the next state event, counted from just before the write. A change
 * is over when every connection has it or `changeTimeoutMs` passed.
 *
 * Messages to the parent: {phase: 'connected', ...}, {phase: 'change', ...} per change, {phase: 'done'}.
 * argv[2] = JSON SseClientsArgs
 */
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface SseClientsArgs {
  host: string;
  port: number;
  path: string;
  connections: number;
  /** Connections opened at once (each batch waits for its first events). */
  batch: number;
  /** The state file to rewrite, and its text for change k. */
  changeFile: string;
  changeText: string;
  changes: number;
  changeTimeoutMs: number;
  connectTimeoutMs: number;
}

export interface ConnectedMessage {
  phase: 'connected';
  open: number;
  refused: number;
  failed: number;
  ms: number;
}

export interface ChangeMessage {
  phase: 'change';
  change: number;
  /** Milliseconds from just before the write to each connection's event, of those that got it. */
  latenciesMs: number[];
  missed: number;
}

const args = JSON.parse(process.argv[2]!) as SseClientsArgs;
const send = (m: object) => process.send!(m);
const MARK = 'data: ';

/** One stream: its socket and whether (and when) the awaited event arrived. */
interface Client {
  socket: Socket;
  /** The end of the previous chunk, in case the mark is split across two. */
  tail: string;
  seen: boolean;
  at: number;
  status: number;
}

let waiting = 0;
let onAllSeen: (() => void) | undefined;
const clients: Client[] = [];

function onData(this: Socket, chunk: string): void {
  const c = (this as Socket & { client: Client }).client;
  if (c.status === 0) {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(chunk);
    c.status = m ? Number(m[1]) : -1;
  }
  if (c.seen) return;
  const text = c.tail + chunk;
  if (text.includes(MARK)) {
    c.seen = true;
    c.at = performance.now();
    if (--waiting === 0) onAllSeen?.();
  } else {
    c.tail = text.slice(-MARK.length);
  }
}

function open(): Client {
  const socket = connect(args.port, args.host);
  const c: Client = { socket, tail: '', seen: false, at: 0, status: 0 };
  (socket as Socket & { client: Client }).client = c;
  socket.setEncoding('latin1');
  socket.on('data', onData);
  socket.on('error', () => {
    if (!c.seen) c.status = -2;
  });
  socket.write(`GET ${args.path} HTTP/1.1\r\nHost: ${args.host}:${args.port}\r\nAccept: text/event-stream\r\n\r\n`);
  return c;
}

/** Resolves when every client in `batch` saw an event, or after `ms`. */
function awaitEvents(batch: Client[], ms: number): Promise<void> {
  waiting = batch.filter((c) => !c.seen).length;
  if (waiting === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      onAllSeen = undefined;
      resolve();
    }, ms);
    onAllSeen = () => {
      clearTimeout(timer);
      onAllSeen = undefined;
      resolve();
    };
  });
}

const started = performance.now();
for (let i = 0; i < args.connections; i += args.batch) {
  const batch: Client[] = [];
  for (let j = i; j < Math.min(args.connections, i + args.batch); j++) batch.push(open());
  clients.push(...batch);
  await awaitEvents(batch, args.connectTimeoutMs);
}
const open_ = clients.filter((c) => c.seen).length;
// Streams that never got their first event (refused, failed) take no part in what follows.
for (const c of clients) if (!c.seen) c.socket.destroy();
send({
  phase: 'connected',
  open: open_,
  refused: clients.filter((c) => c.status === 503).length,
  failed: clients.length - open_,
  ms: performance.now() - started,
} satisfies ConnectedMessage);

await new Promise<void>((resolve) => process.once('message', () => resolve()));

const live = clients.filter((c) => c.seen);
for (let k = 1; k <= args.changes; k++) {
  for (const c of live) {
    c.seen = false;
    c.tail = '';
  }
  const done = awaitEvents(live, args.changeTimeoutMs);
  const t0 = performance.now();
  writeFileSync(args.changeFile, args.changeText.replaceAll('{k}', String(k)));
  await done;
  const got = live.filter((c) => c.seen);
  send({ phase: 'change', change: k, latenciesMs: got.map((c) => c.at - t0), missed: live.length - got.length } satisfies ChangeMessage);
  // Let the server settle (and the next change be a change of its own) before the next one.
  await new Promise((r) => setTimeout(r, 1000));
}
for (const c of clients) c.socket.destroy();
send({ phase: 'done' });
process.disconnect();
