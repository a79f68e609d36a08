import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { REPO, runCli } from './run-cli.js';

const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

t.test('--version and -v print the package version', async (t) => {
  for (const flag of ['--version', '-v']) {
    const r = await runCli([flag]);
    t.equal(r.code, 0);
    t.equal(r.stdout, `vexil ${version}\n`);
    t.equal(r.stderr, '');
  }
});

t.test('--help, -h and help print the general usage', async (t) => {
  for (const args of [['--help'], ['-h'], ['help']]) {
    const r = await runCli(args);
    t.equal(r.code, 0, args.join(' '));
    t.match(r.stdout, /^Usage: vexil <command> \[options\]/);
    t.match(r.stdout, /serve/);
    t.match(r.stdout, /validate/);
  }
});

t.test('each command has its help, two ways', async (t) => {
  for (const [cmd, head] of [
    ['serve', 'Usage: vexil serve [--config FILE]'],
    ['validate', 'Usage: vexil validate [PATH...] [--format text|json|github|sarif] [--strict] [--no-checks]'],
  ] as const) {
    for (const args of [['help', cmd], [cmd, '--help'], [cmd, '-h']]) {
      const r = await runCli(args);
      t.equal(r.code, 0, args.join(' '));
      t.ok(r.stdout.startsWith(head), `${args.join(' ')} prints the ${cmd} usage`);
    }
  }
  const v = await runCli(['help', 'validate']);
  t.match(v.stdout, /Exit status: 0 valid, 1 invalid, a guard failed \(or warnings with --strict\),\n2 usage error/);
});

t.test('usage errors exit 2 with the usage on stderr', async (t) => {
  const cases: Array<[string[], RegExp, RegExp]> = [
    [[], /missing command/, /Usage: vexil <command>/],
    [['frobnicate'], /unknown command "frobnicate"/, /Usage: vexil <command>/],
    [['--frob'], /unknown option "--frob"/, /Usage: vexil <command>/],
    [['help', 'nope'], /unknown command "nope"/, /Usage: vexil <command>/],
    [['--version', 'extra'], /unexpected argument "extra"/, /Usage: vexil <command>/],
    [['validate', '--bogus'], /--bogus/, /Usage: vexil validate/],
    [['validate', '--format', 'xml', 'examples'], /unknown format "xml"/, /Usage: vexil validate/],
    [['validate', '--format'], /--format/, /Usage: vexil validate/],
    [['validate', 'no/such/folder'], /no such file or folder: no\/such\/folder/, /Usage: vexil validate/],
    [['serve', '--port', '1'], /--port/, /Usage: vexil serve/],
    [['serve', 'extra'], /extra/, /Usage: vexil serve/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(args)));
  for (const [i, [args, message, usage]] of cases.entries()) {
    const r = results[i]!;
    t.equal(r.code, 2, `${args.join(' ') || '(nothing)'} exits 2`);
    t.match(r.stderr, message);
    t.match(r.stderr, usage);
    t.equal(r.stdout, '', 'nothing on stdout');
  }
});
