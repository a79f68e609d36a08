/**
 * The import graph of a source tree and its check against a floor table, for
 * test/architecture.test.ts (which holds the table and runs this on `src/` and on the fixture trees
 * under fixtures/architecture/).
 *
 * Every `.ts`/`.tsx` file under the root is read with TypeScript's own pre-processor
 * (`ts.preProcessFile`), so every kind of dependency counts: `import`, `import type`,
 * `export ... from`, `import()` with a literal, `import x = require()`, and module augmentation
 * (`declare module './x.js'`). A relative specifier is resolved as NodeNext resolves ours (`.js` names
 * the `.ts`/`.tsx` source); packages, `node:` modules and files outside the root are not part of the
 * graph. Comments and strings are not read as imports.
 *
 * A unit is a folder directly under the root, or a file directly under it (`errors.ts`). The check
 * reports, for every import between two units, the ones the table forbids, and every cycle: file
 * cycles (a strongly connected set of files, or a file importing itself) and unit cycles (units
 * that import one another through any files, which floors allow only among siblings).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import: `from` and `to` are paths relative to the root, with `/`. */
export interface ImportEdge {
  from: string;
  to: string;
  line: number;
}

export interface LayerRules {
  /** Floors, top to bottom; each lists its units. A unit imports from floors below it or its own floor. */
  floors: ReadonlyArray<readonly string[]>;
  /**
   * Islands: a unit that imports only the units listed for it (whatever its floor would allow) and
   * that no other unit imports.
   */
  islands?: Readonly<Record<string, readonly string[]>>;
}

export interface ArchitectureReport {
  /** Imports the table forbids, each as `from:line -> to (fromUnit -> toUnit: why)`. */
  forbidden: string[];
  /** File cycles, each as its files in import order joined by ` -> ` and closed on the first. */
  fileCycles: string[];
  /** Unit cycles, each as its units in import order joined by ` -> ` and closed on the first. */
  unitCycles: string[];
  /** Units present under the root that no floor names. */
  unplaced: string[];
  /** Number of files read and of imports between them (to show the check saw the tree). */
  files: number;
  imports: number;
}

const SOURCE = /\.(ts|tsx)$/;

/** Every source file under `root`, relative with `/`, sorted (declaration files are not sources). */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** The source file a relative specifier names, or undefined when it is not a file of the tree. */
function resolveSpecifier(files: ReadonlySet<string>, root: string, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const target = relative(root, resolve(root, dirname(from), specifier)).split(sep).join('/');
  const stem = target.replace(/\.(js|jsx|ts|tsx|mjs|cjs)$/, '');
  for (const candidate of [target, `${stem}.ts`, `${stem}.tsx`, `${target}/index.ts`, `${target}/index.tsx`]) {
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

/** Every import between two files of the tree under `root`. */
export function readImports(root: string): { files: string[]; edges: ImportEdge[] } {
  const files = sourceFiles(root);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const info = ts.preProcessFile(text, true, true);
    for (const imported of info.importedFiles) {
      const to = resolveSpecifier(known, root, file, imported.fileName);
      if (to === undefined) continue;
      const line = text.slice(0, imported.pos).split('\n').length;
      edges.push({ from: file, to, line });
    }
  }
  return { files, edges };
}

/** The unit a file belongs to: its first folder, or its own name when it sits directly under the root. */
export function unitOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash);
}

/** Why `fromUnit` may not import `toUnit`, or undefined when it may. */
function refusal(rules: LayerRules, floorOf: ReadonlyMap<string, number>, fromUnit: string, toUnit: string): string | undefined {
  if (fromUnit === toUnit) return undefined;
  const islands = rules.islands ?? {};
  const allowed = islands[fromUnit];
  if (allowed !== undefined && !allowed.includes(toUnit)) return `${fromUnit} imports only ${allowed.join(', ')}`;
  if (islands[toUnit] !== undefined) return `${toUnit} is imported by nothing`;
  const from = floorOf.get(fromUnit);
  const to = floorOf.get(toUnit);
  if (from === undefined || to === undefined) return undefined; // reported as unplaced
  if (to < from) return 'an upward import';
  return undefined;
}

/** Strongly connected components (Tarjan) of a graph given as adjacency lists; only those that are cycles. */
function cycles(nodes: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (next.get(node) ?? []).includes(node)) found.push(component);
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

/**
 * A component written as one closed path (`a -> b -> a`): the shortest way from its first name
 * (sorted) back to itself; members off that path are named after it.
 */
function closedPath(component: readonly string[], next: ReadonlyMap<string, readonly string[]>): string {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  let last: string | undefined;
  while (queue.length > 0 && last === undefined) {
    const at = queue.shift()!;
    for (const target of [...(next.get(at) ?? [])].sort()) {
      if (!members.has(target)) continue;
      if (target === start) {
        last = at;
        break;
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, at);
        queue.push(target);
      }
    }
  }
  const path = [start];
  for (let at = last; at !== undefined && at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
  const rest = component.filter((n) => !path.includes(n)).sort();
  return [...path, start].join(' -> ') + (rest.length > 0 ? `  (and ${rest.join(', ')})` : '');
}

/** Checks the tree under `root` against `rules`. */
export function checkArchitecture(root: string, rules: LayerRules): ArchitectureReport {
  const { files, edges } = readImports(root);
  const floorOf = new Map<string, number>();
  rules.floors.forEach((units, floor) => units.forEach((unit) => floorOf.set(unit, floor)));

  const unplaced = [...new Set(files.map(unitOf))].filter((unit) => !floorOf.has(unit)).sort();

  const forbidden: string[] = [];
  const fileNext = new Map<string, string[]>();
  const unitNext = new Map<string, Set<string>>();
  for (const edge of edges) {
    const fromUnit = unitOf(edge.from);
    const toUnit = unitOf(edge.to);
    const why = refusal(rules, floorOf, fromUnit, toUnit);
    if (why !== undefined) forbidden.push(`${edge.from}:${edge.line} -> ${edge.to} (${fromUnit} -> ${toUnit}: ${why})`);
    const list = fileNext.get(edge.from) ?? [];
    if (!list.includes(edge.to)) list.push(edge.to);
    fileNext.set(edge.from, list);
    if (fromUnit !== toUnit) {
      const units = unitNext.get(fromUnit) ?? new Set<string>();
      units.add(toUnit);
      unitNext.set(fromUnit, units);
    }
  }

  const fileCycles = cycles(files, fileNext).map((c) => closedPath(c, fileNext)).sort();
  const units = [...new Set(files.map(unitOf))].sort();
  const unitLists = new Map([...unitNext].map(([unit, set]) => [unit, [...set].sort()] as const));
  const unitCycles = cycles(units, unitLists).map((c) => closedPath(c, unitLists)).sort();

  return { forbidden: forbidden.sort(), fileCycles, unitCycles, unplaced, files: files.length, imports: edges.length };
}
