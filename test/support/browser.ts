/**
 * A real browser for the tests that need one (CORS, the browser SDKs): Debian's `chromium`
 * (installed by scripts/test-setup.sh) driven headless by `playwright-core`, which downloads no
 * browser of its own. Each test gets a fresh profile in a temp folder, removed at teardown.
 *
 *   const why = chromiumUnavailableReason();               // skip (or fail under CI): requirements.ts
 *   const browser = await startBrowser(t);
 *   const site = await startPageServer(t, { pages: { '/': html }, packages: ['@flipt-io/flipt-client-browser'] });
 *   const page = await browser.newPage();
 *   await page.goto(`${site.url}/`);                       // another origin than vexil's (another port)
 *   await saveScreenshot(page, 'name');                    // test-output/screenshots/name.png
 *
 * The page server is a tiny node:http server on 127.0.0.1 with its own port, so a page it serves is
 * on another origin than the vexil under test and every request from it to vexil is cross-origin.
 * It serves the given pages and, under /node_modules/<package>/, the files of the named packages
 * (for an import map: no CDN, no bundler).
 */
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Where screenshots go (git-ignored), for a reviewer to open. */
export const SCREENSHOTS = join(REPO, 'test-output', 'screenshots');

/**
 * Flags for headless Chromium on a closed network (../shared/testing-recipes.md §6): no sandbox
 * (root in a container), no GPU, and none of the background traffic Chromium would otherwise
 * send to Google (component updates, sync, QUIC probes) and wait on.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumUnavailableReason(): string | undefined {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    return `${CHROMIUM} not found: install Debian's chromium (apt-get install chromium; scripts/test-setup.sh does it as root)`;
  }
  return undefined;
}

/** Headless Chromium with a throwaway profile; closed (and the profile removed) at teardown. */
export async function startBrowser(t: Teardown): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'vexil-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 800, height: 480 },
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  t.teardown(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** The page's first tab (a persistent context opens one). */
export async function firstPage(context: BrowserContext): Promise<Page> {
  return context.pages()[0] ?? (await context.newPage());
}

/** Saves a PNG of the page under test-output/screenshots/ and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface PageServerOptions {
  /** URL path → HTML of the page. */
  pages: Record<string, string>;
  /** npm packages whose files are served under /node_modules/<name>/ (from this repository's node_modules). */
  packages?: readonly string[];
}

export interface PageServer {
  /** `http://127.0.0.1:<port>`: the pages' origin. */
  readonly url: string;
  /** Every request it answered, as `METHOD path status`. */
  readonly requests: string[];
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

/** Serves test pages and package files from a second loopback origin; closed at teardown. */
export async function startPageServer(t: Teardown, opts: PageServerOptions): Promise<PageServer> {
  const requests: string[] = [];
  const roots = new Map((opts.packages ?? []).map((name) => [name, resolve(REPO, 'node_modules', name)]));

  /** A file of one of the named packages, never outside its folder. */
  const packageFile = (path: string): string | undefined => {
    for (const [name, root] of roots) {
      const prefix = `/node_modules/${name}/`;
      if (!path.startsWith(prefix)) continue;
      const file = resolve(root, decodeURIComponent(path.slice(prefix.length)));
      if (!file.startsWith(root + sep)) return undefined;
      try {
        return statSync(file).isFile() ? file : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const answer = (status: number, type: string, body: string | Buffer) => {
      requests.push(`${req.method} ${path} ${status}`);
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const page = opts.pages[path];
    if (page !== undefined) return answer(200, 'text/html; charset=utf-8', page);
    // Browsers ask for one unprompted; "no content" keeps a 404 out of the page's console.
    if (path === '/favicon.ico') return answer(204, 'image/x-icon', '');
    const file = packageFile(path);
    if (file !== undefined) return answer(200, CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file));
    return answer(404, 'text/plain', 'not found');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, requests };
}
