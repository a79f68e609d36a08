/**
 * The refusals vexil invents (503s that are neither the client's fault nor a bug) are built by the
 * constructors of src/errors.ts only, and REFUSALS lists each constructor, so docs/errors.md
 * (generated from it) names every 503 a request can get. The /health and /ready probes answer 503
 * for "not ready" on purpose: they are probes, not refused requests, and stay in their routes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import * as errors from '../src/errors.js';
import { Code, REFUSALS, VexilError } from '../src/errors.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'ui') out.push(...sourceFiles(path));
    } else if (e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Lines that build a 503 themselves: `new VexilError(Code.Unavailable` or `new VexilError(14`. */
function ownUnavailable(text: string): number[] {
  const lines: number[] = [];
  for (const m of text.matchAll(/new VexilError\(\s*(?:Code\.Unavailable|14)\b/g)) lines.push(text.slice(0, m.index).split('\n').length);
  return lines;
}

t.test('the scan finds a 503 built outside src/errors.ts (it can fail)', async (t) => {
  t.same(ownUnavailable("x;\nthrow new VexilError(Code.Unavailable, 'busy');\nnew VexilError(14, 'y')"), [2, 3]);
});

t.test('no 503 is built outside src/errors.ts, except the health and readiness probes', async (t) => {
  const found: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const rel = relative(ROOT, file).split('\\').join('/');
    if (rel === 'src/errors.ts' || /\/meta(\.ts$|\/)/.test(rel)) continue;
    for (const line of ownUnavailable(readFileSync(file, 'utf8'))) found.push(`${rel}:${line}`);
  }
  t.same(found, [], 'build these with a constructor of src/errors.ts and list it in REFUSALS');
});

t.test('every refusal constructor of src/errors.ts is listed in REFUSALS, and builds a 503', async (t) => {
  const listed = new Set(Object.keys(REFUSALS));
  for (const [name, refusal] of Object.entries(REFUSALS)) {
    t.equal(typeof (errors as Record<string, unknown>)[name], 'function', `${name} is a constructor of src/errors.ts`);
    const err = refusal.example();
    t.ok(err instanceof VexilError && err.code === Code.Unavailable, `${name} is Unavailable`);
  }
  // Constructors whose example is a 503 but that REFUSALS does not list would be missing from the page.
  const text = readFileSync(join(ROOT, 'src', 'errors.ts'), 'utf8');
  const constructors = [...text.matchAll(/^export const (\w+) = \([^)]*\) =>\s*\n?\s*new VexilError\(\s*Code\.Unavailable/gm)].map((m) => m[1]!);
  t.same(constructors.sort(), [...listed].sort(), 'the 503 constructors of src/errors.ts are exactly those REFUSALS lists');
  t.ok(listed.size >= 10, `${listed.size} refusals`);
});
