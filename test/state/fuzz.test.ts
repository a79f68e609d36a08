/**
 * 1,000 mutated state files (truncation, type swaps, garbage bytes, deep nesting, huge strings,
 * line edits): the loader never throws, and whatever fails comes back as problems located in the
 * file (line and column >= 1), and every syntax problem's caret, in the excerpt that quotes its
 * line (excerpt.ts), lands on a character of that line that is not a space. Seeded, so a failure
 * reproduces; the seed and case are printed.
 */
import t from 'tap';
import jsYaml from 'js-yaml';
import { problemExcerpt } from '../../src/state/excerpt.js';
import { load } from '../../src/state/load.js';
import type { Problem } from '../../src/model/problem.js';
import type { StateFile } from '../../src/state/load.js';
import { fixtureDir, fixtureFile, listFiles } from '../support/state-fixture.js';
import { mulberry32 } from '../support/prng.js';

const CASES = 1000;
const SEED = 0x5eed;

const rand = mulberry32(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];

// Small valid and invalid bases, YAML and JSON.
const bases: StateFile[] = [
  ...['versions', 'multi-file', 'attachments', 'index-flipt'].flatMap((name) =>
    listFiles(fixtureDir(name))
      .filter((p) => /\.(ya?ml|json)$/.test(p) && !p.startsWith('.') && !p.includes('/.'))
      .map((p) => fixtureFile(name, p)),
  ),
  ...['constraint.value.array.yml', 'schema.exclusive.yml', 'json.syntax.json', 'rule.segment.unknown.yml'].map((p) => fixtureFile('problems', p)),
];
const dec = new TextDecoder();
const enc = new TextEncoder();

type Mutation = (bytes: Uint8Array, path: string) => { bytes: Uint8Array; path?: string };

const VALUES: unknown[] = [null, true, 0, -1.5, 1e309, '', 'x'.repeat(5), [], [1, 'a'], {}, { k: { j: [] } }, '2024-01-01', 'yes', '.nan'];

function swapType(bytes: Uint8Array, path: string): { bytes: Uint8Array } {
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(dec.decode(bytes)) : jsYaml.load(dec.decode(bytes), { schema: jsYaml.CORE_SCHEMA });
  } catch {
    return { bytes };
  }
  // Walk to a random node and replace it (or one of its children) with a value of another type.
  let node = doc as Record<string | number, unknown>;
  for (let depth = 0; depth < 6 && node && typeof node === 'object'; depth++) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const k = pick(keys);
    if (rand() < 0.35 || typeof node[k] !== 'object' || node[k] === null) {
      node[k] = pick(VALUES);
      break;
    }
    node = node[k] as Record<string | number, unknown>;
  }
  const text = path.endsWith('.json') ? JSON.stringify(doc) : jsYaml.dump(doc);
  return { bytes: enc.encode(text) };
}

const mutations: Record<string, Mutation> = {
  truncate: (b) => ({ bytes: b.slice(0, int(b.length + 1)) }),
  garbage: (b) => {
    const out = Array.from(b);
    for (let n = 1 + int(8); n > 0; n--) out.splice(int(out.length + 1), rand() < 0.3 ? 1 : 0, int(256));
    return { bytes: Uint8Array.from(out) };
  },
  controlChars: (b) => {
    const s = dec.decode(b);
    const at = int(s.length + 1);
    return { bytes: enc.encode(s.slice(0, at) + pick(['\t', '\u0000', '\r', '\u2028', '\ufeff', ': ', '- ', '&a ', '*a', '!!binary ', '? ', '{', ']', '"', "'", '#', '|', '>']) + s.slice(at)) };
  },
  typeSwap: swapType,
  deepNesting: (_b, path) => {
    const depth = 200 + int(6000);
    const json = path.endsWith('.json');
    const body = rand() < 0.5 ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const text = rand() < 0.5 ? body : json ? `{"flags":[{"key":"d","name":"D","variants":[{"key":"v","attachment":${body.startsWith('[') ? `{"x":${body}}` : body}}]}]}` : `flags:\n  - key: d\n    name: D\n    variants:\n      - key: v\n        attachment: {"x": ${body}}\n`;
    return { bytes: enc.encode(text) };
  },
  hugeString: (b, path) => {
    const big = pick(['x', 'é', '😀', ' ', '\\n']).repeat(100_000 + int(400_000));
    if (path.endsWith('.json')) return { bytes: enc.encode(`{"flags":[{"key":"h","name":${JSON.stringify(big)}}]}`) };
    const s = dec.decode(b);
    return { bytes: enc.encode(rand() < 0.5 ? `${s}\n# ${big}\n` : `flags:\n  - key: "${big}"\n    name: ${big}\n`) };
  },
  lineEdit: (b) => {
    const lines = dec.decode(b).split('\n');
    const i = int(lines.length);
    switch (int(4)) {
      case 0:
        lines.splice(i, 1);
        break;
      case 1:
        lines.splice(i, 0, lines[int(lines.length)] ?? '');
        break;
      case 2:
        lines[i] = ` ${lines[i] ?? ''}`;
        break;
      default: {
        const j = int(lines.length);
        [lines[i], lines[j]] = [lines[j], lines[i]];
      }
    }
    return { bytes: enc.encode(lines.join('\n')) };
  },
  rename: (b) => ({ bytes: b, path: pick(['x.toml', 'noext', 'a.JSON', 'deep/dir/f.yaml', 'f.json', 'f.yml']) }),
};
const names = Object.keys(mutations);

/**
 * The character under a problem's caret in the excerpt that quotes its line (through
 * `firstColumn` when the line is shown from a later column), or undefined when the caret is
 * past the quoted text.
 */
function caretCharacter(text: string, p: Problem): string | undefined {
  const e = problemExcerpt(text, p.line, p.column);
  if (e === undefined) return undefined;
  const line = e.lines[p.line - e.startLine]!;
  const at = e.firstColumn === undefined ? p.column - 1 : 1 + (p.column - e.firstColumn);
  return at < line.length ? line[at] : undefined;
}

/** Syntax problems whose caret is not on a character of the quoted line other than a space. */
function caretsOnNothing(bytes: Uint8Array, problems: readonly Problem[]): string[] {
  const syntax = problems.filter((p) => p.rule === 'yaml.syntax' || p.rule === 'yaml.duplicate-key');
  if (syntax.length === 0) return [];
  const text = dec.decode(bytes).replace(/^\ufeff/, '');
  return syntax
    .filter((p) => {
      const c = caretCharacter(text, p);
      return c === undefined || c === ' ';
    })
    .map((p) => `${p.line}:${p.column} ${p.message} (caret on ${JSON.stringify(caretCharacter(text, p) ?? 'nothing')})`);
}

t.test(`${CASES} mutated state files`, async (t) => {
  let failures = 0;
  let loaded = 0;
  let syntaxCases = 0;
  const misplaced: string[] = [];
  const byRule = new Map<string, number>();
  for (let c = 0; c < CASES; c++) {
    const base = pick(bases);
    let bytes = base.bytes;
    let path = base.path;
    const applied: string[] = [];
    for (let n = 1 + int(2); n > 0; n--) {
      const m = pick(names);
      applied.push(m);
      const out = mutations[m](bytes, path);
      bytes = out.bytes;
      path = out.path ?? path;
    }
    const label = `case ${c} (seed ${SEED}): ${base.path} ${applied.join('+')}`;
    let r: ReturnType<typeof load>;
    try {
      r = load([{ path, bytes }], { reference: 'fuzz', revision: String(c) });
    } catch (err) {
      failures++;
      t.fail(`${label}: load threw ${String(err)}`);
      continue;
    }
    const errors = r.problems.filter((p) => p.severity === 'error');
    if (r.snapshot) loaded++;
    const ok =
      (r.snapshot ? errors.length === 0 : errors.length > 0) &&
      r.problems.every((p) => p.file === path && p.line >= 1 && p.column >= 1 && p.rule.length > 0 && p.message.length > 0 && p.rule !== 'internal.error');
    if (!ok) {
      failures++;
      t.fail(`${label}: ${JSON.stringify(r.problems.slice(0, 3)).slice(0, 800)}`);
    }
    for (const p of r.problems) byRule.set(p.rule, (byRule.get(p.rule) ?? 0) + 1);
    if (/\.ya?ml$/.test(path) && r.problems.some((p) => p.rule === 'yaml.syntax')) {
      syntaxCases++;
      for (const m of caretsOnNothing(bytes, r.problems)) misplaced.push(`${label}: ${m}`);
    }
  }
  t.ok(syntaxCases >= 50, `the corpus has YAML syntax errors to check (${syntaxCases} files)`);
  t.same(misplaced.slice(0, 10), [], `every YAML syntax caret is on a character of its quoted line that is not a space (${misplaced.length} are not)`);
  t.equal(failures, 0, 'every case: no throw, located problems, snapshot iff no error');
  t.ok(loaded > 0 && loaded < CASES, `some mutants still load (${loaded}), most do not`);
  t.ok(byRule.has('yaml.syntax') && byRule.has('schema.type') && byRule.has('file.encoding'), 'the mutations reach the parser, the schema and the decoder');
  t.comment([...byRule].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}=${v}`).join(' '));
});
