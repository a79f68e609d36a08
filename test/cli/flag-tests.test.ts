/**
 * `vexil test`: the real CLI in a child process over examples/ (which must pass) and the fixtures
 * under fixtures/flag-tests/ (a failing case, invalid test files, an invalid state, a tests:
 * section in the index file), in each output format, with the exit codes; and the test-file reader.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readTestFile } from '../../src/state/flag-tests/read-test-file.js';
import { REPO, runCli } from './run-cli.js';

const FAILING = 'fixtures/flag-tests/failing';
const FAILING_FILE = `${FAILING}/checkout.test.yml`;

function lineOf(file: string, line: number): string {
  return readFileSync(join(REPO, file), 'utf8').split('\n')[line - 1] ?? '';
}

// ----- a minimal, strict XML reader (enough to check JUnit structure and escaping) -----------------

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function decodeEntities(s: string, where: string): string {
  if (/[<]/.test(s)) throw new Error(`raw < in ${where}`);
  return s.replace(/&([^;]*);|&/g, (m, ent: string | undefined) => {
    if (ent === undefined) throw new Error(`bare & in ${where}`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (named[ent] !== undefined) return named[ent];
    if (/^#x[0-9a-fA-F]+$/.test(ent)) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (/^#[0-9]+$/.test(ent)) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    throw new Error(`unknown entity ${m} in ${where}`);
  });
}

function parseXml(xml: string): XmlElement {
  let i = 0;
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  if (!decl) throw new Error('missing XML declaration');
  i = decl[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (i < xml.length) {
    if (xml.startsWith('</', i)) {
      const m = /^<\/([A-Za-z_][\w.-]*)\s*>/.exec(xml.slice(i));
      if (!m) throw new Error(`bad end tag at ${i}`);
      const open = stack.pop();
      if (open?.name !== m[1]) throw new Error(`</${m[1]}> closes <${open?.name}>`);
      i += m[0].length;
      continue;
    }
    if (xml[i] === '<') {
      const m = /^<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"]*")*)\s*(\/?)>/.exec(xml.slice(i));
      if (!m) throw new Error(`bad start tag at ${i}: ${xml.slice(i, i + 40)}`);
      const attrs: Record<string, string> = {};
      for (const a of m[2]!.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) {
        if (Object.hasOwn(attrs, a[1]!)) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1]!] = decodeEntities(a[2]!, `attribute ${a[1]}`);
      }
      const el: XmlElement = { name: m[1]!, attrs, children: [], text: '' };
      if (stack.length === 0) {
        if (root !== undefined) throw new Error('two root elements');
        root = el;
      } else stack.at(-1)!.children.push(el);
      if (m[3] !== '/') stack.push(el);
      i += m[0].length;
      continue;
    }
    const next = xml.indexOf('<', i);
    const raw = xml.slice(i, next < 0 ? xml.length : next);
    if (stack.length === 0) {
      if (raw.trim() !== '') throw new Error('text outside the root');
    } else stack.at(-1)!.text += decodeEntities(raw, `text of <${stack.at(-1)!.name}>`);
    i = next < 0 ? xml.length : next;
  }
  if (stack.length > 0 || root === undefined) throw new Error('unclosed elements');
  return root;
}

// ----- examples -----------------------------------------------------------------------------------

t.test('examples/ has a test file that passes: exit 0, ✓ per case', async (t) => {
  const r = await runCli(['test', 'examples']);
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.equal(r.stderr, '');
  const lines = r.stdout.trimEnd().split('\n');
  t.equal(lines[0], 'examples/flags.test.yml');
  const cases = lines.filter((l) => l.startsWith('  '));
  t.ok(cases.length >= 10, `${cases.length} cases`);
  t.ok(cases.every((l) => l.startsWith('  ✓ ')), 'every case passes');
  t.match(lines.at(-1), /^OK: (\d+) passed \(\1 cases in 1 test file\)$/);

  // What the example cases cover: both namespaces, a boolean threshold, segment matches.
  const json = await runCli(['test', '--format', 'json', 'examples']);
  t.equal(json.code, 0);
  const results = JSON.parse(json.stdout) as Array<Record<string, any>>;
  t.same([...new Set(results.map((c) => c.namespace))].sort(), ['checkout', 'default']);
  t.ok(results.some((c) => c.actual.type === 'boolean' && /threshold/.test(c.decision)), 'a boolean flag decided by a threshold');
  t.ok(results.some((c) => c.actual.type === 'variant' && c.expected.segments?.length > 0 && /segments? .* matched/.test(c.decision)), 'a segment match');
  t.ok(results.some((c) => c.actual.type === 'boolean' && c.expected.segments?.length > 0), 'a boolean segment rollout');

  // A test file named directly runs against the folder holding it.
  const file = await runCli(['test', 'examples/flags.test.yml']);
  t.equal(file.code, 0, file.stdout);
  t.equal(file.stdout, r.stdout, 'same run');
});

t.test('a file named twice (directly and through its folder) runs once', async (t) => {
  const r = await runCli(['test', '-f', 'json', 'examples', 'examples/flags.test.yml']);
  t.equal(r.code, 0);
  const once = JSON.parse((await runCli(['test', '-f', 'json', 'examples'])).stdout) as unknown[];
  t.equal((JSON.parse(r.stdout) as unknown[]).length, once.length);
});

t.test('--dir: test files kept apart from the state', async (t) => {
  const r = await runCli(['test', 'fixtures/flag-tests/external', '--dir', 'examples']);
  t.equal(r.code, 0, r.stdout);
  t.match(r.stdout, /✓ gift-wrapping for "007"/, 'default name; the number 007 read as the text written');
  t.match(r.stdout, /OK: 2 passed/);

  // Without --dir the folder holding the test file is the state: here, one without flags.
  const alone = await runCli(['test', 'fixtures/flag-tests/external']);
  t.equal(alone.code, 1);
  t.match(alone.stdout, /flag "checkout\/gift-wrapping" not found|namespace "checkout" not found/);
});

// ----- the failing fixture, in every format --------------------------------------------------------

t.test('text: ✓/✗ per case; a failing case shows expected vs actual, why, and the trace', async (t) => {
  const r = await runCli(['test', FAILING]);
  t.equal(r.code, 1);
  const out = r.stdout;
  t.match(out, /^fixtures\/flag-tests\/failing\/checkout\.test\.yml\n {2}✓ enterprise users get the blue checkout\n {2}✗ enterprise users in Germany get the blue checkout <&"'>\n/);
  const block = out.slice(out.indexOf('✗ enterprise users in Germany'), out.indexOf('✓ dark mode for enterprise'));
  t.match(block, `at ${FAILING_FILE}:8:5`);
  t.match(block, 'flag default/new-checkout, entity "user-42", context plan="enterprise" country="DE"');
  t.match(block, 'variant: expected blue, got red');
  t.match(block, 'segments: expected [enterprise], got [germany]');
  t.match(block, 'actual:  variant red, match, MATCH_EVALUATION_REASON, segments germany');
  t.match(block, /why: {5}rule 1 decided: segment germany matched, bucket \d+ is in red \[0, 1000\)/);
  t.match(block, /trace:\n {8}rule 1: segment germany: matched, decides\n {10}✓ segment germany \(ANY\)\n {14}✓ country is "DE"; got "DE"/);
  t.match(block, / {8}rule 2: not evaluated/);

  t.match(out, /✗ dark mode for everyone else\n(.*\n)*? {6}enabled: expected true, got false\n/);
  t.match(out, / {14}✗ plan is "enterprise"; not in the context/, 'the constraint that missed');
  t.match(out, /✗ a flag that was deleted\n(.*\n)*? {6}flag "default\/old-checkout" not found\n/);
  t.match(out, /`variant` cannot be checked: default\/dark-mode is a boolean flag/);
  t.match(out, /\nFAILED: 4 failed, 2 passed \(6 cases in 1 test file\)\n$/);
});

t.test('json: an array of case results', async (t) => {
  const r = await runCli(['test', '--format', 'json', FAILING]);
  t.equal(r.code, 1);
  const results = JSON.parse(r.stdout) as Array<Record<string, any>>;
  t.equal(results.length, 6);
  t.same(
    results.map((c) => c.status),
    ['passed', 'failed', 'passed', 'failed', 'failed', 'failed'],
  );
  for (const c of results) {
    t.equal(c.file, FAILING_FILE);
    t.equal(lineOf(c.file, c.line).slice(c.column - 1), `name: ${c.name}`, `${c.name}: line ${c.line}:${c.column} is where the case starts`);
  }
  const [pass, fail, , , missing] = results;
  t.same(pass!.expected, { variant: 'blue', match: true, reason: 'MATCH_EVALUATION_REASON' }, 'short reasons read as the long form');
  t.equal(pass!.trace, undefined, 'no trace for a passing case');
  t.match(pass!.decision, /^rule 2 decided/);
  t.match(fail, {
    name: `enterprise users in Germany get the blue checkout <&"'>`,
    namespace: 'default',
    flag: 'new-checkout',
    entity: 'user-42',
    context: { plan: 'enterprise', country: 'DE' },
    expected: { variant: 'blue', segments: ['enterprise'] },
    actual: { type: 'variant', variant: 'red', match: true, reason: 'MATCH_EVALUATION_REASON', segments: ['germany'], attachment: null },
    mismatches: [
      { field: 'variant', expected: 'blue', actual: 'red' },
      { field: 'segments', expected: ['enterprise'], actual: ['germany'] },
    ],
    trace: { flagType: 'VARIANT_FLAG_TYPE', decision: { by: 'rule', rank: 1, outcome: 'distribution' }, rules: [{ rank: 1, decided: true }] },
  });
  t.match(missing, { status: 'failed', actual: null, message: 'flag "default/old-checkout" not found' });
});

t.test('junit: well-formed XML with testsuites/testsuite/testcase/failure, escaped', async (t) => {
  const r = await runCli(['test', '--format', 'junit', FAILING, 'fixtures/flag-tests/invalid-test-file', 'fixtures/flag-tests/invalid-state']);
  t.equal(r.code, 1);
  const root = parseXml(r.stdout);
  t.equal(root.name, 'testsuites');
  t.match(root.attrs, { tests: '9', failures: '4', errors: '2' });
  t.same(
    root.children.map((s) => [s.name, s.attrs.name]),
    [
      ['testsuite', FAILING_FILE],
      ['testsuite', 'fixtures/flag-tests/invalid-test-file/broken.test.yml'],
      ['testsuite', 'fixtures/flag-tests/invalid-state/dark.test.yml'],
    ],
  );
  for (const suite of root.children) {
    const cases = suite.children.filter((c) => c.name === 'testcase');
    t.equal(Number(suite.attrs.tests), cases.length, `${suite.attrs.name}: tests= counts its testcases`);
    t.equal(Number(suite.attrs.failures), cases.filter((c) => c.children.some((x) => x.name === 'failure')).length);
    t.equal(Number(suite.attrs.errors), cases.filter((c) => c.children.some((x) => x.name === 'error')).length);
    t.ok(Number.isFinite(Number(suite.attrs.time)));
  }

  const failing = root.children[0]!.children.filter((c) => c.name === 'testcase');
  t.equal(failing.length, 6);
  const special = failing[1]!;
  t.equal(special.attrs.name, `enterprise users in Germany get the blue checkout <&"'>`, 'the name survives escaping');
  t.equal(special.attrs.classname, 'default/new-checkout');
  t.equal(special.attrs.file, FAILING_FILE);
  t.equal(special.attrs.line, '8');
  const failure = special.children[0]!;
  t.equal(failure.name, 'failure');
  t.equal(failure.attrs.message, 'variant: expected blue, got red; segments: expected [enterprise], got [germany]');
  t.match(failure.text, /actual: {2}variant red/);
  t.match(failure.text, /why: {5}rule 1 decided: segment germany matched/);
  t.match(failure.text, /trace:\n {2}rule 1: segment germany: matched, decides\n/);
  t.equal(failing[0]!.children.length, 0, 'a passing case has no child');
  t.equal(failing[4]!.children[0]!.attrs.message, 'flag "default/old-checkout" not found');

  const broken = root.children[1]!.children.filter((c) => c.name === 'testcase');
  t.match(broken[0]!.children[0], { name: 'error', attrs: { type: 'InvalidTestFile' } });
  t.match(broken[0]!.children[0]!.text, /broken\.test\.yml:7:5: error flag-test\.required: case 2 is missing `flag`/);
  t.equal(broken[1]!.attrs.name, 'fine', 'the valid case of an invalid file still runs');
  t.equal(broken[1]!.children.length, 0);

  const notRun = root.children[2]!.children.find((c) => c.name === 'testcase')!;
  t.match(notRun.children[0], { name: 'error', attrs: { type: 'StateInvalid', message: /the state in fixtures\/flag-tests\/invalid-state is invalid/ } });
  t.match(notRun.children[0]!.text, /features\.yml:9:16: error rollout\.segment\.unknown/);
});

t.test('junit escapes what XML cannot hold', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-flag-tests-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'features.yml'), 'flags:\n  - key: f\n    name: F\n    type: BOOLEAN_FLAG_TYPE\n    enabled: false\n');
  writeFileSync(join(dir, 'x.test.yml'), 'tests:\n  - name: "bell \\a and ]]> & <tag>"\n    flag: f\n    entity: "e\\u0001"\n    expect: { enabled: true }\n');
  const r = await runCli(['test', '-f', 'junit', dir]);
  t.equal(r.code, 1);
  t.notMatch(r.stdout, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/, 'no control character reaches the XML');
  const root = parseXml(r.stdout);
  const testcase = root.children[0]!.children.find((c) => c.name === 'testcase')!;
  t.equal(testcase.attrs.name, 'bell \\u{7} and ]]> & <tag>');
  t.match(testcase.children[0]!.text, 'entity "e\\u0001"', 'JSON-escaped in the body');
});

t.test('github: an ::error annotation at the line of each failing case', async (t) => {
  const r = await runCli(['test', '--format', 'github', FAILING, 'fixtures/flag-tests/invalid-test-file']);
  t.equal(r.code, 1);
  const lines = r.stdout.trimEnd().split('\n');
  const annotations = lines.filter((l) => l.startsWith('::'));
  const ANNOTATION = /^::error file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.+)$/;
  t.ok(annotations.every((l) => ANNOTATION.test(l)), 'every line is a well-formed annotation');
  const failed = annotations.map((l) => ANNOTATION.exec(l)!).filter((m) => m[4]!.startsWith('flag test failed%3A '));
  t.equal(failed.length, 4);
  for (const m of failed) {
    const [, file, line, col, title] = m;
    const name = decodeURIComponent(title!.replace('flag test failed%3A ', '').replace(/%2C/g, ','));
    t.equal(file, FAILING_FILE);
    t.equal(lineOf(file!, Number(line)).slice(Number(col) - 1), `name: ${name}`, `annotation of "${name}" points at its case`);
  }
  t.match(failed[0]![5], /^variant: expected blue, got red%0Asegments: expected \[enterprise\], got \[germany\]%0A.*%0Awhy: rule 1 decided: segment germany matched/);
  const problems = annotations.filter((l) => /title=flag-test\./.test(l));
  t.equal(problems.length, 5, 'the invalid test file: one annotation per problem');
  t.match(problems[0], /^::error file=fixtures\/flag-tests\/invalid-test-file\/broken\.test\.yml,line=7,col=5,title=flag-test\.required::case 2 is missing `flag`$/);
  t.equal(lines.at(-1), 'FAILED: 4 failed, 3 passed, 1 invalid test file (7 cases in 2 test files)');
});

// ----- other inputs and exit codes ----------------------------------------------------------------

t.test('a tests: section in the index file .vexil.yml', async (t) => {
  const r = await runCli(['test', 'fixtures/flag-tests/index-section']);
  t.equal(r.code, 1);
  t.match(r.stdout, /^fixtures\/flag-tests\/index-section\/\.vexil\.yml\n {2}✓ the index file can hold cases too\n {2}✗ a failing case in the index file\n {6}at fixtures\/flag-tests\/index-section\/\.vexil\.yml:10:5\n/);
  t.match(r.stdout, /enabled: expected true, got false/);
});

t.test('invalid test files: located problems, the valid cases still run, exit 1', async (t) => {
  const r = await runCli(['test', 'fixtures/flag-tests/invalid-test-file']);
  t.equal(r.code, 1);
  const file = 'fixtures/flag-tests/invalid-test-file/broken.test.yml';
  for (const [loc, rule, message] of [
    ['7:5', 'required', 'case 2 is missing `flag`'],
    ['14:5', 'unknown-key', 'unknown key `contxt` in case 3'],
    ['20:38', 'enum', '`expect.reason` of case 4 must be one of MATCH, DEFAULT, FLAG_DISABLED, UNKNOWN'],
    ['25:13', 'empty-expect', '`expect` of case 5 is empty'],
    ['30:13', 'expect-conflict', '`expect` of case 6 mixes `enabled` (boolean flags) with `variant`'],
  ] as const) {
    t.match(r.stdout, `${file}:${loc}: error flag-test.${rule}: ${message}`);
  }
  t.match(r.stdout, /✓ fine/);
  t.match(r.stdout, /FAILED: 1 passed, 1 invalid test file \(1 case in 1 test file\)/);

  const syntax = await runCli(['test', 'fixtures/flag-tests/syntax']);
  t.equal(syntax.code, 1);
  t.match(syntax.stdout, /fixtures\/flag-tests\/syntax\/bad\.test\.yml:5:5: error flag-test\.syntax: /);

  const json = await runCli(['test', '-f', 'json', 'fixtures/flag-tests/invalid-test-file']);
  t.equal(json.code, 1);
  t.equal((JSON.parse(json.stdout) as unknown[]).length, 1, 'json: the cases that ran');
  t.match(json.stderr, /broken\.test\.yml:7:5: error flag-test\.required/, 'json: the problems on stderr');
});

t.test('an invalid state: its located problems, its cases not run, exit 1', async (t) => {
  const r = await runCli(['test', 'fixtures/flag-tests/invalid-state']);
  t.equal(r.code, 1);
  t.match(r.stdout, /^the state in fixtures\/flag-tests\/invalid-state is invalid \(1 error, 0 warnings\); its cases were not run\nfixtures\/flag-tests\/invalid-state\/features\.yml:9:16: error rollout\.segment\.unknown: /);
  t.match(r.stdout, /✗ dark mode is on\n(.*\n)*? {6}not run: the state in fixtures\/flag-tests\/invalid-state is invalid/);
  t.match(r.stdout, /FAILED: 0 passed, 1 not run, 1 invalid state \(1 case in 1 test file\)/);
  const json = await runCli(['test', '-f', 'json', 'fixtures/flag-tests/invalid-state']);
  t.match(JSON.parse(json.stdout), [{ status: 'error', actual: null }]);
  const gh = await runCli(['test', '-f', 'github', 'fixtures/flag-tests/invalid-state']);
  t.match(gh.stdout, /^::error file=fixtures\/flag-tests\/invalid-state\/features\.yml,line=9,col=16,title=rollout\.segment\.unknown::/);
  t.match(gh.stdout, /^::error file=fixtures\/flag-tests\/invalid-state\/dark\.test\.yml,line=2,col=5,title=flag test not run%3A dark mode is on::/m);
});

t.test('no test case found: exit 1 with a hint', async (t) => {
  const named = await runCli(['test', 'fixtures/flag-tests/failing/features.yml']);
  t.equal(named.code, 1, 'a state file named as a test file is an invalid test file');
  t.match(named.stdout, /features\.yml:1:1: error flag-test\.required: the test file is missing `tests`/);
  const empty = await runCli(['test', 'fixtures/state/versions']);
  t.equal(empty.code, 1);
  t.match(empty.stderr, /no flag test found/);
});

t.test('usage errors exit 2 with the test usage', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--format', 'xml', 'examples'], /unknown format "xml" \(expected text, json, junit, github\)/],
    [['no/such/path'], /no such file or folder: no\/such\/path/],
    [['examples', '--dir', 'no/such/folder'], /no such folder: no\/such\/folder/],
    [['--bogus'], /--bogus/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(['test', ...args])));
  for (const [i, [args, message]] of cases.entries()) {
    const r = results[i]!;
    t.equal(r.code, 2, `${args.join(' ')} exits 2`);
    t.match(r.stderr, message);
    t.match(r.stderr, /Usage: vexil test \[PATH\.\.\.\]/);
  }
  const help = await runCli(['help', 'test']);
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: vexil test \[PATH\.\.\.\] \[--dir PATH\] \[--format text\|json\|junit\|github\]/);
});

// ----- the test-file reader -------------------------------------------------------------------------

t.test('readTestFile: scalars as written, defaults, lines', async (t) => {
  const text = [
    'namespace: team',
    'tests:',
    '  - flag: f',
    '    entity: 007',
    '    context: { total: 1.50, flag: true, empty: , quoted: "x" }',
    '    expect: { enabled: false, reason: FLAG_DISABLED, segments: [a, 2] }',
    '  - name: 42',
    '    namespace: other',
    '    flag: g',
    '    entity: e',
    '    expect:',
    '      variant: 10',
    '      attachment: { a: [1, 2] }',
  ].join('\n');
  const { cases, problems } = readTestFile('x.test.yml', text);
  t.same(problems, []);
  t.equal(cases.length, 2);
  t.match(cases[0], { file: 'x.test.yml', line: 3, column: 5, index: 0, name: 'f for "007"', namespace: 'team', flag: 'f', entity: '007' });
  t.same({ ...cases[0]!.context }, { total: '1.50', flag: 'true', empty: '', quoted: 'x' });
  t.same(cases[0]!.expect, { enabled: false, reason: 'FLAG_DISABLED_EVALUATION_REASON', segments: ['a', '2'] });
  t.match(cases[1], { line: 7, name: '42', namespace: 'other' });
  t.same(cases[1]!.expect, { variant: '10', attachment: { a: [1, 2] } });

  const section = readTestFile('.vexil.yml', 'include: ["*.yml"]\n', { section: true });
  t.same(section, { cases: [], problems: [] }, 'an index file without tests: nothing');
  const empty = readTestFile('e.test.yml', '');
  t.match(empty.problems, [{ rule: 'flag-test.empty', line: 1 }]);
  const dup = readTestFile('d.test.yml', 'tests: []\ntests: []\n');
  t.match(dup.problems, [{ rule: 'flag-test.syntax', line: 2 }]);
});
