/**
 * Every page of the web UI in one sweep, against a real `vexil serve` of a real Git repository:
 * at 375 px and at 1280 px, in the light and the dark theme, no page scrolls sideways, axe-core
 * finds no serious or critical violation, and a screenshot of each (page, width, theme) is saved in
 * test-output/screenshots/ (`every-<page>-<width>-<theme>.png`). At 1280 px light, pressing Tab
 * from the page's heading reaches every control that follows it, in document order (the page's
 * tabs above the heading come before it; browse.test.ts checks the header's order).
 *
 * The other browser tests check what each page says; this one holds the rules every page shares,
 * so a page added later is one row of PAGES.
 */
import tap from 'tap';
import { tabThroughMain } from '../support/tab-order.js';
import { startUi, uiTests } from '../support/ui-harness.js';

const t = uiTests(tap);

const context = encodeURIComponent(JSON.stringify({ region: 'eu', plan: 'beta', age: '30' }));

/** Each page: its address and what it shows once it has loaded. */
const PAGES: ReadonlyArray<{ name: string; path: string; ready: RegExp }> = [
  { name: 'namespaces', path: '/ui/namespaces', ready: /Catalog/ },
  { name: 'flags', path: '/ui/namespaces/default/flags', ready: /payment-provider/ },
  { name: 'flag', path: '/ui/namespaces/default/flags/payment-provider', ready: /adyen/i },
  { name: 'flag-feature', path: '/ui/namespaces/default/flags/payment-provider?ref=feature', ready: /Differs from main/ },
  { name: 'segments', path: '/ui/namespaces/default/segments', ready: /EU customers/ },
  { name: 'segment', path: '/ui/namespaces/default/segments/eu', ready: /payment-provider/ },
  { name: 'console', path: `/ui/console?namespace=default&flag=payment-provider&entity=user-42&context=${context}`, ready: /adyen/ },
  { name: 'entity', path: `/ui/entity?namespace=default&entity=user-42&context=${context}`, ready: /dark-mode/ },
  { name: 'diff', path: '/ui/diff?base=main&head=feature', ready: /payment-provider/ },
  { name: 'status', path: '/ui/status', ready: /feature/ },
  { name: 'history', path: '/ui/history?ref=main', ready: /Checkout flags/ },
  { name: 'not-found', path: '/ui/no-such-page', ready: /Page not found/ },
];

const WIDTHS = [375, 1280] as const;
const THEMES = ['light', 'dark'] as const;

t.test('every page: no sideways scroll at 375 and 1280 px, axe in both themes, keyboard reach', async (t) => {
  const ui = await startUi(t);
  for (const p of PAGES) {
    await ui.test(t, p.name, async (t, tab) => {
      const { page } = tab;
      for (const width of WIDTHS) {
        for (const theme of THEMES) {
          await page.setViewportSize({ width, height: 800 });
          await page.emulateMedia({ colorScheme: theme });
          await tab.open(p.path);
          await tab.waitText(p.ready);
          t.ok((await tab.scrollWidth()) <= width, `${p.name} at ${width} px (${theme}): no sideways scroll`);
          await tab.checkpoint(t, `every-${p.name}-${width}-${theme}`);
        }
      }
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.emulateMedia({ colorScheme: 'light' });
      await tab.open(p.path);
      await tab.waitText(p.ready);
      const { afterHeading, reached } = await tabThroughMain(page);
      t.ok(afterHeading.length > 0 || p.name === 'not-found', `${p.name}: has controls after its heading`);
      t.same(reached.slice(0, afterHeading.length), afterHeading, `${p.name}: Tab from the heading reaches every control after it, in order`);
    });
  }
});
