/**
 * `vexil serve` inside Kubernetes: the platform's own `VEXIL_*` variables (service links of a
 * Service named `vexil`) are ignored, logged by name only at debug level; the variables that name
 * a config key are applied and type-checked.
 */
import t from 'tap';
import { freePort } from '../support/throwaway-db.js';
import { runCli, serveCli } from './run-cli.js';

/** What Kubernetes injects into every pod of the namespace for a Service `vexil` on port 8080 (port named http). */
const SERVICE_LINKS = {
  VEXIL_PORT: 'tcp://10.0.0.1:8080',
  VEXIL_PORT_8080_TCP: 'tcp://10.0.0.1:8080',
  VEXIL_PORT_8080_TCP_PROTO: 'tcp',
  VEXIL_PORT_8080_TCP_PORT: '8080',
  VEXIL_PORT_8080_TCP_ADDR: '10.0.0.1',
  VEXIL_SERVICE_HOST: '10.0.0.1',
  VEXIL_SERVICE_PORT: '8080',
  VEXIL_SERVICE_PORT_HTTP: '8080',
};

const IGNORED_MESSAGE = 'environment variable ignored: it names no config key';

t.test('serve: starts with the service-link variables of a Service `vexil`, on VEXIL_SERVER_HTTP_PORT', async (t) => {
  const port = await freePort();
  const { logs, listening } = await serveCli(t, ['serve'], {
    env: { ...SERVICE_LINKS, VEXIL_SERVER_HTTP_PORT: String(port), VEXIL_LOG_LEVEL: 'debug', VEXIL_DEPLOY_TOKEN: 'hunter2-not-for-logs' },
  });
  t.equal(listening.url, `http://127.0.0.1:${port}`, 'listens on the port the variable names');
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  const res = await fetch(`http://127.0.0.1:${port}/evaluate/v1/boolean`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'new-search', entityId: 'u1', context: {} }),
  });
  t.equal(res.status, 200, 'answers evaluations');

  const ignored = logs.filter((l) => l.msg === IGNORED_MESSAGE);
  t.same(
    ignored.map((l) => l.variable),
    [...Object.keys(SERVICE_LINKS), 'VEXIL_DEPLOY_TOKEN'].sort(),
    'one debug line per ignored variable, naming it',
  );
  t.ok(
    ignored.every((l) => l.level === 'debug'),
    'at debug level',
  );
  const output = JSON.stringify(logs);
  t.notOk(output.includes('10.0.0.1'), 'no value of a service-link variable is logged');
  t.notOk(output.includes('hunter2-not-for-logs'), 'no value of an ignored variable is logged');
});

t.test('serve: at the default log level the ignored variables are not logged', async (t) => {
  const { logs } = await serveCli(t, ['serve'], { env: { ...SERVICE_LINKS, VEXIL_SERVER_HTTP_PORT: '0' } });
  t.notOk(
    logs.some((l) => l.msg === IGNORED_MESSAGE),
    'debug lines only',
  );
});

t.test('serve: a known variable of the wrong type still stops the start, naming it', async (t) => {
  // A Service named `vexil-server-http` would inject exactly this.
  const r = await runCli(['serve'], { env: { ...SERVICE_LINKS, VEXIL_SERVER_HTTP_PORT: 'tcp://10.0.0.2:80' } });
  t.equal(r.code, 1);
  t.match(r.stderr, /server\.http_port: must be an integer .*from VEXIL_SERVER_HTTP_PORT/);
  t.notMatch(r.stderr, /VEXIL_PORT|VEXIL_SERVICE/, 'the ignored variables are not problems');
  t.notMatch(r.stdout, /"msg":"listening"/);
});
