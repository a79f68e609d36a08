/**
 * The Node.js lines vexil supports are named the same everywhere, and a run on another line really
 * runs on it. scripts/node-lines.conf lists the exact versions the runtime suites run on besides
 * the machine's Node.js (scripts/test-node.sh) and those suites; package.json's `engines`, the
 * README, the Dockerfile's base images and the CI templates must agree with it, and the Node.js
 * running this file must satisfy `engines`. Under scripts/test-node.sh (TEST_NODE_LINE set to the
 * version), this process is that version and better-sqlite3's addon, built per Node.js ABI, loads.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** A bash array of the sourced config, one element a line. */
function confArray(name: string): string[] {
  const r = spawnSync('bash', ['-c', `source scripts/node-lines.conf && printf '%s\\n' "\${${name}[@]}"`], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`sourcing scripts/node-lines.conf failed: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l !== '');
}

type Version = [number, number, number];
const parse = (v: string): Version => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(v);
  if (!m) throw new Error(`not a version: ${v}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
};
/** `^X.Y.Z || ^X.Y.Z ...` (the only form package.json uses): same major, at least X.Y.Z. */
function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = parse(version);
  return range.split('||').some((part) => {
    const m = /^\s*\^(\d+\.\d+\.\d+)\s*$/.exec(part);
    if (!m) throw new Error(`engines part not of the form ^X.Y.Z: ${part}`);
    const [a, b, c] = parse(m[1]);
    return major === a && (minor > b || (minor === b && patch >= c));
  });
}

const lines = confArray('NODE_LINES');
const suites = confArray('NODE_LINES_SUITES');
const majors = lines.map((v) => parse(v)[0]);
const active = Math.max(...majors);
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

t.test('the range check reads engines as npm does', async (t) => {
  t.ok(satisfies('20.19.0', '^20.19.0 || ^24.0.0'));
  t.notOk(satisfies('20.18.3', '^20.19.0 || ^24.0.0'));
  t.notOk(satisfies('22.20.0', '^20.19.0 || ^24.0.0'));
  t.ok(satisfies('24.0.0', '^20.19.0 || ^24.0.0'));
  t.notOk(satisfies('27.0.0', '^20.19.0 || ^24.0.0'));
});

t.test('the lines are exact versions of distinct majors', async (t) => {
  t.ok(lines.length >= 2, `${lines.join(', ')}`);
  for (const v of lines) t.match(v, /^\d+\.\d+\.\d+$/, `${v} is exact`);
  t.equal(new Set(majors).size, majors.length);
});

t.test('this Node.js satisfies engines, and so does every line', async (t) => {
  t.ok(satisfies(process.versions.node, engines), `${process.version} in ${engines}`);
  for (const v of lines) t.ok(satisfies(v, engines), `${v} in ${engines}`);
});

t.test('the README names every line and the engines range', async (t) => {
  const readme = read('README.md');
  t.ok(readme.includes(`Supported Node.js: **${majors.join(' and ')}**`), 'the supported majors');
  for (const v of lines) t.ok(readme.includes(v), `README names ${v}`);
  t.ok(readme.includes(`\`${engines}\``), 'README quotes engines');
});

t.test('the image and the CI templates run the active line', async (t) => {
  const dockerfile = read('Dockerfile');
  t.match(dockerfile, new RegExp(`^ARG NODE_IMAGE=node:${active}-`, 'm'));
  t.match(dockerfile, new RegExp(`^ARG BUILD_IMAGE=node:${active}-`, 'm'));
  t.match(read('action.yml'), new RegExp(`node-version:[^]*?default: "${active}"`));
  t.match(read('ci/gitlab/vexil.gitlab-ci.yml'), new RegExp(`^  image: node:${active}-`, 'm'));
});

t.test('every runtime suite exists, once', async (t) => {
  t.ok(suites.length > 0);
  t.equal(new Set(suites).size, suites.length);
  for (const f of suites) t.ok(f.endsWith('.test.ts') && existsSync(join(ROOT, f)), f);
  t.ok(suites.includes('test/node-lines.test.ts'), 'this file runs on every line too');
});

// Under scripts/test-node.sh: the version it installed; on the machine's run, none.
const expected = process.env.TEST_NODE_LINE;
t.test(`better-sqlite3 loads on Node.js ${process.versions.node}`, async (t) => {
  if (expected !== undefined) {
    t.equal(process.versions.node, expected, 'tap started this file with the line under test');
    t.ok(lines.includes(expected), 'a listed line');
  }
  const require = createRequire(import.meta.url);
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(':memory:');
  t.match(db.prepare('select sqlite_version() as v').get(), { v: /^3\./ }, 'the addon was built for this ABI');
  db.close();
});
