/**
 * What every browser test of the web UI (test/ui/*.test.ts) shares: a real `vexil serve` process
 * serving a real Git repository over HTTP with two branches (`main` and `feature`, from the state
 * files of test/ui/fixtures/), one headless Chromium per test file, and per test a fresh tab that
 * records every console error and page error (a test fails on any it did not expect), plus the
 * checkpoint each page goes through: axe-core (no serious or critical violation) and a screenshot
 * under test-output/screenshots/.
 *
 *   const t = uiTests(tap);
 *   t.test('browse', async (t) => {
 *     const ui = await startUi(t);                      // vexil + git server + Chromium
 *     await ui.test(t, 'namespaces', async (t, tab) => {
 *       await tab.open('/');
 *       await tab.waitText(/Catalog/);
 *       await tab.checkpoint(t, 'ui-namespaces');
 *     });
 *   });
 *
 * The assertions read text (innerText), never pixels.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import type { Test } from 'tap';
import { REPO, serveCli } from '../cli/run-cli.js';
import { SCREENSHOTS, chromiumUnavailableReason, saveScreenshot, startBrowser } from './browser.js';
import { gitUnavailableReason, startGitFixture, type GitFixture } from './git-fixture.js';
import { git } from './git-repo.js';
import { testsNeeding } from './requirements.js';

export const UI_FIXTURES = fileURLToPath(new URL('../ui/fixtures/', import.meta.url));
const UI_BUILD = join(REPO, 'dist', 'ui', 'index.html');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** How long a page may take to show what a test waits for (the machine is shared and slow at times). */
const WAIT_MS = 20_000;

type Root = Pick<Test, 'test' | 'fail' | 'skip'>;

/**
 * A pattern matching `text` whatever the whitespace between its words (innerText puts line breaks
 * between blocks, and none around visually hidden labels): `Rule 1 decided: segment eu`.
 */
export function words(text: string): RegExp {
  return new RegExp(text.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s*'));
}

/** The root to declare a UI test file's tests on: skipped without Chromium or git (failed under CI). */
export function uiTests<T extends Root>(root: T): T {
  return testsNeeding(root, 'chromium and git', chromiumUnavailableReason() ?? gitUnavailableReason());
}

/** The state files of test/ui/fixtures/<folder>/, by file name. */
function fixtureFiles(folder: string): Record<string, string> {
  const dir = join(UI_FIXTURES, folder);
  return Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

export interface UiOptions {
  /** YAML of the `authentication:` block (none: the UI is open). */
  authentication?: string;
  /** The port vexil listens on (0: any), for a configuration that names vexil's own address (OIDC). */
  port?: number;
  /** `storage.git.prebuild` (default [main, feature]): globs of the branches vexil builds on every poll. */
  prebuild?: readonly string[];
  /** Runs on the repository after main and feature are committed, before vexil starts (more branches). */
  seed?: (repository: GitFixture, main: string) => Promise<void>;
}

export interface UiTab {
  readonly page: Page;
  /** Console errors and page errors so far. */
  readonly errors: string[];
  /** A console error matching this is expected (e.g. the browser's line for a 401 the test provokes). */
  allowError(pattern: RegExp): void;
  /** Goes to a UI path (`/`, `/ui/...`) of the vexil under test. */
  open(path: string): Promise<void>;
  /** Waits until the text of `scope` (default `main`) matches, and returns that text. */
  waitText(pattern: RegExp, scope?: string): Promise<string>;
  /** The text of `scope` (default `main`) now. */
  text(scope?: string): Promise<string>;
  /** The page's width including what only a sideways scroll shows (document.documentElement.scrollWidth). */
  scrollWidth(): Promise<number>;
  /** axe-core finds no serious or critical violation, then a screenshot `<name>.png`. */
  checkpoint(t: Test, name: string): Promise<void>;
}

export interface Ui {
  /** `http://127.0.0.1:<port>` of vexil. */
  readonly url: string;
  readonly git: GitFixture;
  /** Commit ids of the tips of `main` and `feature` as the test started. */
  readonly main: string;
  readonly feature: string;
  readonly browser: BrowserContext;
  /** A subtest with a fresh tab (cookies cleared) that fails on any unexpected console or page error. */
  test(t: Test, name: string, body: (t: Test, tab: UiTab) => Promise<void>): Promise<void>;
  /**
   * Pushes a commit of the state files of test/ui/fixtures/<folder>/ onto `branch` the way a person
   * does: a clone over HTTP, a commit, `git push`. Returns the commit id.
   */
  push(branch: string, folder: string, message: string): Promise<string>;
  /** POST a JSON body to vexil (the API the UI must agree with); returns status and body. */
  post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }>;
}

/** Starts the Git server, vexil and Chromium for the tests of `t` (all stopped at its teardown). */
export async function startUi(t: Test, opts: UiOptions = {}): Promise<Ui> {
  if (!existsSync(UI_BUILD)) throw new Error(`${UI_BUILD} is missing: build the UI first (npm run build:ui; npm test does it)`);
  const repository = await startGitFixture(t, { push: true });
  const main = await repository.repo.commit('main', fixtureFiles('main'), { message: 'Checkout flags' });
  const feature = await repository.repo.commit('feature', fixtureFiles('feature'), { parent: main, message: 'Try Adyen on 60% of everyone' });
  await opts.seed?.(repository, main);

  const dir = mkdtempSync(join(tmpdir(), 'vexil-ui-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'vexil.yml');
  writeFileSync(
    config,
    [
      `server: { host: 127.0.0.1, http_port: ${opts.port ?? 0} }`,
      'log: { level: info, encoding: json }',
      `data_dir: ${join(dir, 'data')}`,
      'storage:',
      '  type: git',
      '  git:',
      `    repository: ${repository.url}`,
      `    cache_dir: ${join(dir, 'cache')}`,
      // The tests refresh through POST /meta/refresh: no poll runs behind their back.
      '    poll_interval: 1h',
      `    prebuild: ${JSON.stringify(opts.prebuild ?? ['main', 'feature'])}`,
      opts.authentication ?? '',
      '',
    ].join('\n'),
  );
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);
  const browser = await startBrowser(t);
  t.comment(`screenshots of the UI pages: ${SCREENSHOTS}`);

  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  const push = async (branch: string, folder: string, message: string) => {
    const work = join(dir, `push-${Date.now()}`);
    const identity = { GIT_AUTHOR_NAME: 'Grace Hopper', GIT_AUTHOR_EMAIL: 'grace@example.com', GIT_COMMITTER_NAME: 'Grace Hopper', GIT_COMMITTER_EMAIL: 'grace@example.com' };
    await git(['clone', '-q', '--branch', branch, repository.url, work]);
    for (const [name, text] of Object.entries(fixtureFiles(folder))) writeFileSync(join(work, name), text);
    await git(['-C', work, 'add', '--all']); // in the throwaway clone: new and changed state files
    await git(['-C', work, 'commit', '-q', '-m', message], { env: identity });
    await git(['-C', work, 'push', '-q', 'origin', branch]);
    return git(['-C', work, 'rev-parse', 'HEAD']);
  };

  return {
    url,
    git: repository,
    main,
    feature,
    browser,
    push,
    post,
    test: (t, name, body) =>
      t.test(name, async (t) => {
        await browser.clearCookies();
        const page = await browser.newPage();
        const tab = openTab(page, url);
        try {
          await body(t, tab);
        } finally {
          t.same(tab.errors, [], 'no console errors or page errors');
          await page.close();
        }
      }) as unknown as Promise<void>,
  };
}

function openTab(page: Page, url: string): UiTab {
  const errors: string[] = [];
  const allowed: RegExp[] = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location().url;
    const line = `console: ${m.text()}${where ? ` (${where})` : ''}`;
    if (!allowed.some((a) => a.test(line))) errors.push(line);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));

  const waitText = async (pattern: RegExp, scope = 'main') => {
    try {
      // A function, not a string: the page's CSP refuses eval. (The tests' TypeScript has no DOM library.)
      await page.waitForFunction(
        ([sel, source, flags]) => {
          const { document } = globalThis as unknown as { document: { querySelector(s: string): { innerText: string } | null } };
          return new RegExp(source, flags).test(document.querySelector(sel)?.innerText ?? '');
        },
        [scope, pattern.source, pattern.flags] as const,
        { timeout: WAIT_MS },
      );
    } catch (err) {
      const now = await page.locator(scope).first().innerText({ timeout: 1_000 }).catch(() => '(not on the page)');
      throw new Error(`${scope} never matched ${pattern} at ${page.url()}; it reads:\n${now}\n(${(err as Error).message.split('\n')[0]})`);
    }
    return page.locator(scope).first().innerText();
  };

  return {
    page,
    errors,
    allowError: (pattern) => allowed.push(pattern),
    open: async (path) => {
      await page.goto(`${url}${path}`);
    },
    waitText,
    text: (scope = 'main') => page.locator(scope).first().innerText(),
    scrollWidth: () => page.evaluate<number>('document.documentElement.scrollWidth'),
    async checkpoint(t, name) {
      const violations = await axeViolations(page);
      t.same(
        violations,
        [],
        `axe-core: no serious or critical violation on ${name}` +
          (violations.length > 0 ? `:\n${violations.map((v) => `${v.id} (${v.impact}) ${v.help}: ${v.targets.join(' | ')}`).join('\n')}` : ''),
      );
      t.comment(`screenshot: ${await saveScreenshot(page, name)}`);
    },
  };
}

interface Violation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The source is evaluated
 * through the DevTools protocol: the UI's Content-Security-Policy (script-src 'self') refuses an
 * injected <script>, and this needs no CSP bypass that would change what is tested.
 */
async function axeViolations(page: Page): Promise<Violation[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (loaded !== true) await page.evaluate(AXE_SOURCE);
  return page.evaluate<Violation[]>(`window.axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) })))`);
}

