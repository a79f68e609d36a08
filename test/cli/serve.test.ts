import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { tempState, useFixture } from '../store/temp-state.js';
import { runCli, spawnCli } from './run-cli.js';

/** A config serving `statePath` on a free loopback port, JSON logs. */
function configFor(dir: string, statePath: string): string {
  const file = join(dir, 'vexil.yml');
  writeFileSync(
    file,
    `server:\n  host: 127.0.0.1\n  http_port: 0\nlog:\n  level: info\n  encoding: json\nstorage:\n  type: local\n  local:\n    path: ${JSON.stringify(statePath)}\n`,
  );
  return file;
}

const evaluate = async (url: string) => {
  const res = await fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {} }),
  });
  return { status: res.status, revision: res.headers.get('x-vexil-revision'), body: (await res.json()) as { variantKey: string } };
};

t.test('serve: logs the listening URL, serves and reloads the state, exits 0 on SIGTERM', async (t) => {
  const state = tempState(t, 'hello');
  const config = configFor(tempState(t), state);
  const child = spawnCli(['serve', '--config', config]);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const logs: Array<Record<string, unknown>> = [];
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.msg === 'listening') resolve(String(entry.url));
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  const url = await listening;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.not(url, 'http://127.0.0.1:0', 'the actual port');

  const health = await fetch(`${url}/health`);
  t.equal(health.status, 200);
  const first = await evaluate(url);
  t.equal(first.status, 200);
  t.equal(first.body.variantKey, 'hello');

  useFixture(state, 'bonjour');
  let after = first;
  for (let i = 0; i < 100 && after.body.variantKey !== 'bonjour'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await evaluate(url);
  }
  t.equal(after.body.variantKey, 'bonjour', 'the edit is served');
  t.not(after.revision, first.revision);

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exit 0 after SIGTERM');
  t.ok(
    logs.some((l) => l.msg === 'stopped'),
    'logged a clean stop',
  );
  await t.rejects(fetch(`${url}/health`), 'no longer listening');
});

t.test('serve: SIGINT also shuts down cleanly', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'hello'));
  const child = spawnCli(['serve', '-c', config]);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"msg":"listening"')) resolve();
    });
  });
  child.kill('SIGINT');
  t.equal(await exited, 0);
});

t.test('serve: invalid state at startup prints located errors and exits 1', async (t) => {
  const state = tempState(t, 'broken');
  const config = configFor(tempState(t), state);
  const r = await runCli(['serve', '--config', config]);
  t.equal(r.code, 1);
  t.match(r.stderr, /is invalid \(\d+ errors?, \d+ warnings?\); not starting/);
  t.match(r.stderr, new RegExp(`features\\.yml:\\d+:\\d+: error [a-z0-9.-]+: .*nobody-defined-this`));
  t.match(r.stderr, /\n {2}\s*- segment: nobody-defined-this\n {2}\s*\^\n/, 'the offending line, quoted from the store\'s excerpt, with a caret');
  t.notMatch(r.stdout, /"msg":"listening"/);
});

t.test('serve: a config error exits 1 naming the key', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'hello'));
  const r = await runCli(['serve', '--config', config], { env: { VEXIL_SERVER_HTTP_PORT: 'eighty' } });
  t.equal(r.code, 1);
  t.match(r.stderr, /server\.http_port/);
  const missing = await runCli(['serve', '--config', join(tempState(t), 'nope.yml')]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /nope\.yml/);
});

t.test('serve: an unusable backend configuration exits 1 naming the key', async (t) => {
  const config = configFor(tempState(t), tempState(t, 'hello'));
  const oci = await runCli(['serve', '--config', config], { env: { VEXIL_STORAGE_TYPE: 'oci' } });
  t.equal(oci.code, 1);
  t.match(oci.stderr, /storage\.oci\.repository: is required with storage\.type oci/);
  const object = await runCli(['serve', '--config', config], {
    env: { VEXIL_STORAGE_TYPE: 'object', VEXIL_STORAGE_OBJECT_TYPE: 'azblob' },
  });
  t.equal(object.code, 1);
  t.match(object.stderr, /storage\.object\.azblob\.container: azblob container must be specified/);
  const git = await runCli(['serve', '--config', config], { env: { VEXIL_STORAGE_TYPE: 'git' } });
  t.equal(git.code, 1);
  t.match(git.stderr, /storage\.git\.repository/);
});
