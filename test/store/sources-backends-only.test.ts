/**
 * sources/ holds backends only: a Source hands out bytes and revisions, and turning a revision's
 * files into a load result is the store's (src/store/read-state.ts). This reads every import under
 * src/sources/ and fails when one of them takes the loader itself (`load`, `loadIfCached`) or the
 * store's reader, so the reader cannot drift back beside the backends.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SOURCES = fileURLToPath(new URL('../../src/sources/', import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `import { a, type B, c as d } from 'x'` → [['a', 'c'], 'x'] (value imports only). */
function valueImports(text: string): Array<{ names: string[]; from: string }> {
  const found: Array<{ names: string[]; from: string }> = [];
  for (const m of text.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/gm)) {
    if (m[1] !== undefined) continue;
    const names = (m[2] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '' && !s.startsWith('type '))
      .map((s) => s.split(/\s+as\s+/)[0] as string);
    found.push({ names, from: m[3] as string });
  }
  return found;
}

t.test('no module under src/sources/ loads state or reads a revision into a load result', async (t) => {
  const files = tsFiles(SOURCES);
  t.ok(files.length > 10, 'the backends are found');
  const offending: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const { names, from } of valueImports(text)) {
      const loader = /\/state\/load\.js$/.test(from) && names.some((n) => n === 'load' || n === 'loadIfCached');
      const reader = /read-state\.js$/.test(from);
      if (loader || reader) offending.push(`${relative(SOURCES, file)} imports ${names.join(', ')} from ${from}`);
    }
  }
  t.same(offending, []);
});
