/**
 * The manual's links hold: every relative link in README.md and docs/ names a file or folder that
 * exists, an `#anchor` into a markdown page names one of its headings (GitHub's slug rules), and
 * every page under docs/ can be reached from the README by following links. Links inside code
 * blocks and code spans are not links; absolute URLs (http:, https:, mailto:) are not checked.
 *
 * The helpers are pure functions of the page texts, so the same checks are proved to fail on
 * small broken pages below.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The text outside fenced code blocks, line by line (a fenced line is blanked, so numbers hold). */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]![0]!.repeat(m[1]!.length);
      else if (m[1]!.startsWith(fence)) fence = undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\- _]/gu, '').replace(/ /g, '-');
}

/** The anchors of a page, numbered as GitHub numbers repeated headings (`x`, `x-1`, `x-2`). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The link targets of a page (inline links and images), with their line numbers. */
export function linksOf(text: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  proseLines(text).forEach((raw, i) => {
    const line = raw.replace(/`+[^`]*`+/g, ''); // code spans
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line: i + 1 });
  });
  return out;
}

/** What is wrong with one link from `from` (a path under `root`), or undefined when it resolves. */
/** How the checks see the files: the disk, or pages made up to prove the checks fail. */
export interface Files {
  read(path: string): string;
  exists(path: string): boolean;
  isDirectory(path: string): boolean;
}

export function brokenLink(root: string, from: string, target: string, files: Files): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? from : resolve(dirname(from), decodeURIComponent(pathPart));
  if (!path.startsWith(root)) return `${target} leaves the repository`;
  if (!files.exists(path)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!path.endsWith('.md') || files.isDirectory(path)) return `${target}: an anchor into a file that is not a markdown page`;
  if (!anchorsOf(files.read(path)).has(decodeURIComponent(anchor))) return `${target}: no heading with that anchor in ${relative(root, path)}`;
  return undefined;
}

/** The markdown pages reachable from `start` by following relative links. */
export function reachable(start: string, files: Files): Set<string> {
  const found = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const page = queue.shift()!;
    for (const { target } of linksOf(files.read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const pathPart = target.split('#', 1)[0]!;
      if (pathPart === '' || !pathPart.endsWith('.md')) continue;
      const path = resolve(dirname(page), decodeURIComponent(pathPart));
      if (!found.has(path) && files.exists(path)) {
        found.add(path);
        queue.push(path);
      }
    }
  }
  return found;
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

const readText = (path: string): string => readFileSync(path, 'utf8');
const DISK: Files = { read: readText, exists: existsSync, isDirectory: (path) => statSync(path).isDirectory() };
const README = join(ROOT, 'README.md');
const DOCS = markdownUnder(join(ROOT, 'docs'));

t.test('every relative link in README.md and docs/ resolves, anchors included', async (t) => {
  t.ok(DOCS.length >= 10, `docs/ holds the manual (${DOCS.length} pages)`);
  let links = 0;
  for (const page of [README, ...DOCS]) {
    for (const { target, line } of linksOf(readText(page))) {
      links++;
      const problem = brokenLink(ROOT, page, target, DISK);
      if (problem !== undefined) t.fail(`${relative(ROOT, page)}:${line}: ${problem}`);
    }
  }
  t.ok(links > 100, `${links} links checked`);
});

t.test('every page under docs/ is reachable from README.md', async (t) => {
  const found = reachable(README, DISK);
  for (const page of DOCS) t.ok(found.has(page), `${relative(ROOT, page)} is reachable from the README`);
});

t.test('the README is a front page', async (t) => {
  const text = readText(README);
  const lines = text.split('\n').length;
  t.ok(lines <= 260, `README.md has ${lines} lines (a front page: about 250 at most)`);
  t.ok(text.includes('npm ci && npm start'), 'the quick start');
  t.ok(text.includes('npm test'), 'how to run the tests');
});

t.test('the checks fail on broken pages', async (t) => {
  const pages: Record<string, string> = {
    [join(ROOT, 'README.md')]: '# Top\n\n[a](docs/a.md) [gone](docs/missing.md) [bad](docs/a.md#nope) [ok](docs/a.md#legacy-evaluation-apiv1evaluate)\n',
    [join(ROOT, 'docs/a.md')]: '# A\n\n## Legacy evaluation (`/api/v1/evaluate`)\n\n```sh\n# not a heading [x](nowhere.md)\n```\n\n## A\n',
  };
  const files: Files = { read: (path) => pages[path]!, exists: (path) => path in pages, isDirectory: () => false };
  t.same(linksOf(pages[join(ROOT, 'docs/a.md')]!), [], 'links in code blocks are not links');
  t.same([...anchorsOf(pages[join(ROOT, 'docs/a.md')]!)], ['a', 'legacy-evaluation-apiv1evaluate', 'a-1'], "GitHub's anchors");
  const readme = join(ROOT, 'README.md');
  const problems = linksOf(pages[readme]!).map(({ target }) => brokenLink(ROOT, readme, target, files));
  t.equal(problems[0], undefined, 'an existing page');
  t.match(problems[1], /no such file/, 'a missing page');
  t.match(problems[2], /no heading with that anchor/, 'a missing anchor');
  t.equal(problems[3], undefined, 'an anchor of a heading with code and punctuation');
  t.equal(brokenLink(ROOT, readme, '../outside.md', files), '../outside.md leaves the repository');
  pages[join(ROOT, 'docs/b.md')] = '# B\n';
  const found = reachable(readme, files);
  t.ok(found.has(join(ROOT, 'docs/a.md')), 'a linked page is reachable');
  t.notOk(found.has(join(ROOT, 'docs/b.md')), 'a page no link leads to is not reachable');
});
