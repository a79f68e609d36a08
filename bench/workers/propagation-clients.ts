/**
 * The clients of the propagation benchmark (bench/propagation.ts), in their own process so that
 * the replicas' figures are their own: `connections` Server-Sent Events streams on plain TCP
 * sockets (a GET and a scan of the bytes for `data: `, as bench/workers/sse-clients.ts does),
 * spread round-robin over several replicas, opened in batches, each until its first state event.
 *
 * The parent makes the changes (a git push and maybe a webhook), so this process only watches:
 * on `{cmd: 'arm'}` it forgets every stream's last event and answers `{phase: 'armed'}`; then it
 * reports, once every stream has its next event or `changeTimeoutMs` passed, the wall-clock time
 * (performance.timeOrigin + performance.now(), comparable across processes of one machine) at which
 * each stream got it. `{cmd: 'done'}` closes everything.
 *
 * argv[2] = JSON PropagationClientsArgs
 */
import { connect, type Socket } from 'node:net';

export interface PropagationClientsArgs {
  targets: Array<{ host: string; port: number }>;
  path: string;
  connections: number;
  /** Connections opened at once (each batch waits for its first events). */
  batch: number;
  connectTimeoutMs: number;
  changeTimeoutMs: number;
}

export interface PropagationConnected {
  phase: 'connected';
  open: number;
  failed: number;
  ms: number;
}

export interface PropagationArmed {
  phase: 'armed';
}

export interface PropagationChange {
  phase: 'change';
  /** Wall-clock ms (epoch) of each stream's event and the replica (index into targets) it is on. */
  arrivals: Array<{ at: number; replica: number }>;
  missed: number;
}

const args = JSON.parse(process.argv[2]!) as PropagationClientsArgs;
const send = (m: object) => process.send!(m);
const MARK = 'data: ';
const now = () => performance.timeOrigin + performance.now();

interface Client {
  socket: Socket;
  replica: number;
  tail: string;
  seen: boolean;
  at: number;
}

let waiting = 0;
let onAllSeen: (() => void) | undefined;
const clients: Client[] = [];

function onData(this: Socket, chunk: string): void {
  const c = (this as Socket & { client: Client }).client;
  if (c.seen) return;
  const text = c.tail + chunk;
  if (text.includes(MARK)) {
    c.seen = true;
    c.at = now();
    if (--waiting === 0) onAllSeen?.();
  } else {
    c.tail = text.slice(-MARK.length);
  }
}

function open(i: number): Client {
  const replica = i % args.targets.length;
  const { host, port } = args.targets[replica]!;
  const socket = connect(port, host);
  const c: Client = { socket, replica, tail: '', seen: false, at: 0 };
  (socket as Socket & { client: Client }).client = c;
  socket.setEncoding('latin1');
  socket.on('data', onData);
  socket.on('error', () => {});
  socket.write(`GET ${args.path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  return c;
}

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
  for (let j = i; j < Math.min(args.connections, i + args.batch); j++) batch.push(open(j));
  clients.push(...batch);
  await awaitEvents(batch, args.connectTimeoutMs);
}
const live = clients.filter((c) => c.seen);
for (const c of clients) if (!c.seen) c.socket.destroy();
send({ phase: 'connected', open: live.length, failed: clients.length - live.length, ms: performance.now() - started } satisfies PropagationConnected);

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'arm') {
    for (const c of live) {
      c.seen = false;
      c.tail = '';
    }
    const done = awaitEvents(live, args.changeTimeoutMs);
    send({ phase: 'armed' } satisfies PropagationArmed);
    void done.then(() => {
      const got = live.filter((c) => c.seen);
      send({ phase: 'change', arrivals: got.map((c) => ({ at: c.at, replica: c.replica })), missed: live.length - got.length } satisfies PropagationChange);
    });
  } else if (m.cmd === 'done') {
    for (const c of clients) c.socket.destroy();
    process.disconnect();
  }
});
