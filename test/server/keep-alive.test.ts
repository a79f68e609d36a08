/**
 * Idle keep-alive connections (`server.keep_alive_timeout`, default 65 s) outlive a load balancer's
 * idle timeout (60 s for most), so the load balancer closes them first: a connection idle for
 * longer than Node's own default (5 s) still serves the next request. The headers timeout stays
 * above the keep-alive timeout (the config refuses otherwise).
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { startHttpServer } from '../../src/server/listen.js';
import { parseRawResponse, startTestStore } from './support.js';

async function serve(t: Parameters<typeof startTestStore>[0], adjust: (c: Config) => void = () => {}) {
  const { config, store } = await startTestStore(t);
  adjust(config);
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  let connections = 0;
  server.server.on('connection', () => connections++);
  return { server, connections: () => connections };
}

/** Sends one request on `socket` and reads its whole answer (Content-Length bodies). */
function exchange(socket: Socket, path: string): Promise<ReturnType<typeof parseRawResponse>> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed || !socket.writable) {
      reject(new Error('the server had closed the connection'));
      return;
    }
    let raw = '';
    const onData = (c: Buffer) => {
      raw += c.toString('utf8');
      const parsed = parseRawResponse(raw);
      const length = Number(parsed.headers.get('content-length') ?? NaN);
      if (raw.includes('\r\n\r\n') && Buffer.byteLength(parsed.body) >= length) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(parsed);
      }
    };
    const onClose = () => reject(new Error(`the server closed the connection (${raw.length} bytes read)`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

t.test('default: Keep-Alive timeout=65, and a connection idle past the Node default (5 s) serves the next request', async (t) => {
  const { server, connections } = await serve(t);
  t.equal(server.server.keepAliveTimeout, 65_000);
  t.ok(server.server.headersTimeout > server.server.keepAliveTimeout, 'headers timeout above the keep-alive timeout');
  const socket = connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const first = await exchange(socket, '/health');
  t.equal(first.status, 200);
  t.equal(first.headers.get('keep-alive'), 'timeout=65', 'the client (or load balancer) is told 65 s');
  await sleep(7_000); // Node alone closes such a connection about 6 s after its last response
  const second = await exchange(socket, '/meta/info');
  t.equal(second.status, 200, 'the idle connection was kept');
  t.equal(connections(), 1, 'both requests on one connection');
});

t.test('server.keep_alive_timeout and headers_timeout are applied', async (t) => {
  const { server } = await serve(t, (c) => {
    c.server.keep_alive_timeout = 90_000;
    c.server.headers_timeout = 95_000;
  });
  const socket = connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const res = await exchange(socket, '/health');
  t.equal(res.headers.get('keep-alive'), 'timeout=90');
  t.equal(server.server.headersTimeout, 95_000);
});

t.test('config: from the environment, and a headers timeout not above the keep-alive timeout is refused', async (t) => {
  const c = loadConfig({ env: { VEXIL_SERVER_KEEP_ALIVE_TIMEOUT: '2m', VEXIL_SERVER_HEADERS_TIMEOUT: '2m1s' } });
  t.equal(c.server.keep_alive_timeout, 120_000);
  t.equal(c.server.headers_timeout, 121_000);
  const d = loadConfig({ env: {} });
  t.equal(d.server.keep_alive_timeout, 65_000);
  t.equal(d.server.headers_timeout, 66_000);
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig({ env });
      return '';
    } catch (err) {
      t.type(err, ConfigError);
      return (err as Error).message;
    }
  };
  t.match(refused({ VEXIL_SERVER_KEEP_ALIVE_TIMEOUT: '70s' }), /server\.headers_timeout.*longer than server\.keep_alive_timeout/);
  t.match(refused({ VEXIL_SERVER_HEADERS_TIMEOUT: '6m' }), /server\.headers_timeout.*at most 5m/);
  t.match(refused({ VEXIL_SERVER_KEEP_ALIVE_TIMEOUT: '0s' }), /server\.keep_alive_timeout.*positive/);
});
