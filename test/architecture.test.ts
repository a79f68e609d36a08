/**
 * The layers of `src/`, enforced: every import under `src/` is read (test/support/import-graph.ts)
 * and the test fails on an import the table below forbids, on an import cycle, and on a folder the
 * table does not place. The fixture trees under fixtures/architecture/ show that it does fail.
 *
 * The rule table is written here and in DESIGN.md ("Layout and layers"), nowhere else.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { checkArchitecture, type LayerRules } from './support/import-graph.js';

/**
 * Floors, top to bottom: `cli > server > store > {sources, auth, ui} > {state, config, diff} >
 * {evaluation, http} > model`. A unit (a folder directly under `src/`, or a file directly under it)
 * imports from the floors below its own, and from a sibling on its own floor as long as no cycle
 * results: no file imports itself through others, and no two units import each other (through any
 * files). Type-only imports and module augmentations count like any other import.
 *
 * The files directly under `src/`:
 * - `errors.ts` (the VexilError family) and `text.ts` (string trimming) import nothing and every
 *   floor uses them: the ground floor, with `model`.
 * - `version.ts` imports nothing but reads package.json when loaded, so it is not pure: the
 *   `{evaluation, http}` floor, the lowest its users (server, cli) reach without making the pure
 *   ground floor do I/O.
 * - `logger.ts` builds the pino logger from the log config (`config/`) and the request-path clock
 *   and JSON text (`http/`): above both, on the `{sources, auth, ui}` floor.
 */
const RULES: LayerRules = {
  floors: [
    ['cli'],
    ['server'],
    ['store'],
    ['sources', 'auth', 'ui', 'logger.ts'],
    ['state', 'config', 'diff'],
    ['evaluation', 'http', 'version.ts'],
    ['model', 'errors.ts', 'text.ts'],
  ],
  /**
   * The web UI is an island: it reaches the server over HTTP only, so it imports nothing from the
   * server side and nothing imports it. It may import the pure core that runs in a browser as it is
   * (the snapshot model, and the wording the CLI and the UI share: evaluation/explain-words.ts,
   * diff/describe.ts).
   */
  islands: { ui: ['model', 'evaluation', 'diff'] },
};

const tree = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

t.test('src/: every import points down the layers, and no cycle', async (t) => {
  const report = checkArchitecture(tree('../src'), RULES);
  t.ok(report.files > 200 && report.imports > 800, `read ${report.files} files and ${report.imports} imports`);
  t.same(report.unplaced, [], 'every folder and file directly under src/ is on a floor of the table');
  // Each list names every offender (file:line -> file, or the files of a cycle): the diff shows them.
  t.same(report.forbidden, [], `imports the layers forbid: ${report.forbidden.length}`);
  t.same(report.fileCycles, [], `file import cycles: ${report.fileCycles.length}`);
  t.same(report.unitCycles, [], `folders importing one another: ${report.unitCycles.length}`);
});

/**
 * Inside `src/server/`, by the same rules: the process entry points over the Koa app, the app over
 * the hot-route table and the fast path that serves it, those over the API surfaces (one folder
 * each; a surface may use another, without cycles: OFREP evaluates through evaluation/, the streams
 * choose references as client-snapshot/ does), and the shared request pipeline below them all, so
 * it never reaches up into one API.
 */
const SERVER_RULES: LayerRules = {
  floors: [
    ['listen.ts', 'workers.ts', 'tracing.ts', 'sync-context.ts'],
    ['app.ts'],
    ['fast-path', 'hot-routes.ts'],
    ['management', 'evaluation', 'legacy-evaluation', 'ofrep', 'client-snapshot', 'streams', 'auth', 'diff', 'checks', 'outline', 'meta', 'hooks', 'ui-assets.ts'],
    ['pipeline'],
  ],
};

t.test('src/server/: the pipeline under the API surfaces, the app and the fast path over them', async (t) => {
  const report = checkArchitecture(tree('../src/server'), SERVER_RULES);
  t.ok(report.files > 50, `${report.files} files read`);
  t.same(report.unplaced, [], 'every folder and file directly under src/server/ is on a floor of the table');
  t.same(report.forbidden, [], `imports the layers forbid: ${report.forbidden.length}`);
  t.same(report.unitCycles, [], `folders importing one another: ${report.unitCycles.length}`);
});

t.test('fixture: exactly the one upward import and the one cycle are reported', async (t) => {
  const report = checkArchitecture(tree('../fixtures/architecture/forbidden/src'), RULES);
  t.same(report.forbidden, ['sources/storage.ts:2 -> store/options.ts (sources -> store: an upward import)']);
  t.same(report.fileCycles, ['sources/git/object-header.ts -> sources/git/objects.ts -> sources/git/object-header.ts']);
  t.same(report.unitCycles, []);
  t.same(report.unplaced, []);
  t.equal(report.files, 15, "every file of the tree was read");
});

t.test('fixture: siblings on one floor importing each other are a cycle', async (t) => {
  const report = checkArchitecture(tree('../fixtures/architecture/sibling-cycle/src'), RULES);
  t.same(report.forbidden, [], 'each import alone is allowed (siblings)');
  t.same(report.fileCycles, [], 'no file imports itself');
  t.same(report.unitCycles, ['config -> state -> config']);
});

t.test('fixture: the UI imports only the pure core, and nothing imports the UI', async (t) => {
  const report = checkArchitecture(tree('../fixtures/architecture/island/src'), RULES);
  t.same(report.forbidden, [
    'server/ui-page.ts:1 -> ui/page.ts (server -> ui: ui is imported by nothing)',
    'ui/page.ts:2 -> server/answer.ts (ui -> server: ui imports only model, evaluation, diff)',
  ]);
  t.same(report.fileCycles, []);
  t.same(report.unitCycles, ['server -> ui -> server']);
});

t.test('fixture: a folder the table does not place is reported', async (t) => {
  const report = checkArchitecture(tree('../fixtures/architecture/island/src'), { ...RULES, floors: RULES.floors.filter((f) => !f.includes('ui')) });
  t.same(report.unplaced, ['ui']);
});
