/**
 * The reference switcher and the status page with hundreds of branches, in headless Chromium
 * against a real `vexil serve` on a real Git repository of 302 branches (main, feature and
 * branch-000 … branch-299, all prebuilt): each option says the commit's age beside the load's; typing
 * narrows the list and says how many match; Go leads to the one match or asks to choose; the
 * status page's filter narrows its list. The switcher is on the History page (it changes the
 * history shown) and not on Diff or Status (switching there would change nothing). 375 px: no
 * sideways scroll.
 */
import tap from 'tap';
import { git } from '../support/git-repo.js';
import { startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);
const BRANCHES = 300;
const name = (i: number) => `branch-${String(i).padStart(3, '0')}`;

t.test('302 branches: a searchable switcher and a filtered status page', async (t) => {
  const ui = await startUi(t, {
    prebuild: ['main', 'feature', 'branch-*'],
    seed: async (repository, main) => {
      // One `git update-ref` for all of them: 300 branches at main's commit.
      const lines = Array.from({ length: BRANCHES }, (_, i) => `create refs/heads/${name(i)} ${main}\n`).join('');
      await git(['--git-dir', repository.repo.gitdir, 'update-ref', '--stdin'], { input: lines });
    },
  });
  // vexil builds the prebuilt branches on its first poll: wait (bounded) until all are served.
  let served = 0;
  for (let i = 0; i < 600 && served < BRANCHES + 2; i++) {
    const body = (await (await fetch(`${ui.url}/meta/snapshots`)).json()) as { references: { revision?: unknown }[] };
    served = body.references.filter((r) => r.revision !== undefined).length;
    if (served < BRANCHES + 2) await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(served, BRANCHES + 2, 'vexil serves all 302 branches');

  await ui.test(t, 'the switcher: commit age beside load age, narrowed by typing', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/payment-provider/);
    const select = page.getByLabel('Reference', { exact: true });
    t.equal(await select.locator('option').count(), BRANCHES + 2, 'every branch is listed');
    const first = await select.locator('option').first().innerText();
    t.match(first, new RegExp(`^main · ${ui.main.slice(0, 7)} · committed [\\d,]+ days ago · loaded (just now|\\d+ s ago|\\d+ min ago)$`), 'commit age beside load age');

    const find = page.getByLabel('Other reference (branch, tag or commit id)');
    await find.fill('BRANCH-27');
    t.match(await tab.waitText(/references match/, '#ref-matches'), words('10 of 302 references match "BRANCH-27"'));
    const narrowed = await select.locator('option').allInnerTexts();
    t.same(
      narrowed.map((o) => o.split(' · ')[0]),
      ['main', 'branch-270', 'branch-271', 'branch-272', 'branch-273', 'branch-274', 'branch-275', 'branch-276', 'branch-277', 'branch-278', 'branch-279'],
      'the reference viewed, then the matches',
    );
    await page.getByRole('button', { name: 'Go' }).click();
    t.match(await tab.waitText(/choose one/, '#ref-matches'), words('10 references match: choose one in the Reference list.'), 'several match: Go asks to choose');
    await select.selectOption('branch-271');
    await page.waitForURL(/\?ref=branch-271$/);
    await tab.waitText(/payment-provider/);
    t.equal(await select.inputValue(), 'branch-271');

    await find.fill('anch-123');
    await find.press('Enter');
    await page.waitForURL(/\?ref=branch-123$/);
    t.pass('Enter on a text only one branch contains goes to it');
    t.equal(await find.inputValue(), '', 'and empties the field');
    await tab.checkpoint(t, 'ui-switcher-302');

    await page.setViewportSize({ width: 375, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await find.fill('branch-2');
    await tab.waitText(/100 of 302 references match/, '#ref-matches');
    t.ok((await tab.scrollWidth()) <= 375, 'no sideways scroll at 375 px');
    await tab.checkpoint(t, 'ui-switcher-302-375-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await ui.test(t, 'where the switcher is: History yes, Diff and Status no', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/history?ref=branch-005');
    await tab.waitText(/History of branch-005/);
    t.equal(await page.locator('#ref-select').count(), 1, 'History: the switcher picks whose history is shown');
    await tab.open('/ui/diff?base=main&head=feature&impact=0');
    await tab.waitText(/flags? changed/);
    t.equal(await page.locator('#ref-select').count(), 0, 'Diff: base and head are chosen in the page');
    await tab.open('/ui/status');
    await tab.waitText(/302 references, no problems\./);
    t.equal(await page.locator('#ref-select').count(), 0, 'Status: every reference is listed');
  });

  await ui.test(t, 'the status page of 302 references: a filter narrows the list', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/status');
    await tab.waitText(/302 references, no problems\./);
    await page.getByLabel('Filter references').fill('branch-29');
    await tab.waitText(/10 of 302 references/);
    t.equal(await page.locator('#status-references tbody tr').count(), 10);
    t.equal(await page.locator('section.status-ref').count(), 10);
    await page.setViewportSize({ width: 375, height: 800 });
    t.ok((await tab.scrollWidth()) <= 375, 'no sideways scroll at 375 px');
    await tab.checkpoint(t, 'ui-status-filtered-375');
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.checkpoint(t, 'ui-status-filtered-375-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
