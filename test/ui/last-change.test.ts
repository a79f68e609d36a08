/**
 * The flag page's "last changed" line, in headless Chromium against a real `vexil serve` on a real
 * Git repository (test/support/ui-harness.ts: `main` one commit, `feature` one more that changes
 * payment-provider and new-checkout in default.features.yml): the line names what
 * `GET .../flags/{key}/last-change` answers (short id, author, message's first line), links to
 * that commit's diff when it has a parent (which opens and lists the flag), and a flag whose file changed but not itself still
 * names the older commit. Axe-checked, with screenshots.
 */
import tap from 'tap';
import { startUi, uiTests } from '../support/ui-harness.js';

const t = uiTests(tap);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

t.test('the last change of a flag', async (t) => {
  const ui = await startUi(t);
  const lastChange = async (flag: string, ref: string) => {
    const res = await fetch(`${ui.url}/api/v1/namespaces/default/flags/${flag}/last-change?reference=${ref}`);
    t.equal(res.status, 200);
    return ((await res.json()) as { lastChange: { revision: string; parent?: string; author: string; message: string } }).lastChange;
  };

  await ui.test(t, 'a flag changed by the branch names that commit and links to its diff', async (t, tab) => {
    const api = await lastChange('payment-provider', 'feature');
    t.match(api, { revision: ui.feature, parent: ui.main, author: 'Ada Lovelace <ada@example.com>', message: 'Try Adyen on 60% of everyone' });
    await tab.open('/ui/namespaces/default/flags/payment-provider?ref=feature');
    const line = await tab.waitText(/Last changed in/, 'p.last-change');
    t.match(line, new RegExp(`^Last changed in ${ui.feature.slice(0, 7)} by Ada Lovelace, [0-9,]+ days ago: ${escape(api.message)} \\(see the change\\)$`));
    const href = await tab.page.locator('p.last-change a').getAttribute('href');
    t.equal(href, `/ui/diff?base=${ui.main}&head=${ui.feature}&namespace=default`);
    await tab.checkpoint(t, 'ui-flag-last-change');
    await tab.page.locator('p.last-change a').click();
    t.match(await tab.waitText(/flags? changed/), /payment-provider/, 'the link opens the diff of that commit, which changed the flag');
  });

  await ui.test(t, 'a flag whose file changed but not itself names the commit that did change it (a root commit: no diff link)', async (t, tab) => {
    const api = await lastChange('dark-mode', 'feature');
    t.match(api, { revision: ui.main, message: 'Checkout flags' });
    t.equal(api.parent, undefined);
    await tab.open('/ui/namespaces/default/flags/dark-mode?ref=feature');
    const line = await tab.waitText(/Last changed in/, 'p.last-change');
    t.match(line, new RegExp(`^Last changed in ${ui.main.slice(0, 7)} by Ada Lovelace, [0-9,]+ days ago: Checkout flags$`));
    t.equal(await tab.page.locator('p.last-change a').count(), 0);
    await tab.checkpoint(t, 'ui-flag-last-change-root');
  });
});
