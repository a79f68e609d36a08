/**
 * Browsing flag state in the web UI, in headless Chromium against a real `vexil serve` serving a
 * Git repository with two branches (test/ui/fixtures/: `main`, and `feature` which renames
 * payment-provider, moves its "everyone" rollout 50/50 → 40/60 and enables new-checkout):
 * the namespaces; the flags list with search, type and state filters and its pages (the 60-flag
 * `catalog` namespace); the reference switcher (a built branch from the list, a commit id typed in);
 * a variant flag (variants, attachment, metadata, rules with distributions, on both branches) and a
 * boolean flag (rollouts); the segments and a segment (constraints in words, the flags using it);
 * keyboard navigation; the flags list and a flag at 375 px wide; the dark theme. Every page: no console error, axe-core clean, a screenshot.
 */
import tap, { type Test } from 'tap';
import { startUi, uiTests, type UiTab } from '../support/ui-harness.js';

const t = uiTests(tap);

/** Opens `path` 375 px wide (a phone) and checks nothing needs a sideways scroll. */
async function atPhoneWidth(t: Test, tab: UiTab, path: string, ready: RegExp): Promise<void> {
  await tab.page.setViewportSize({ width: 375, height: 740 });
  await tab.open(path);
  await tab.waitText(ready);
  const width = await tab.scrollWidth();
  t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
}

/** The keys in the flags table, in order. */
const rowKeys = (text: string) => [...text.matchAll(/^(\S+-flag-\d+|[a-z]+(?:-[a-z]+)+)\t/gm)].map((m) => m[1]);

t.test('browse the flag state of a Git repository', async (t) => {
  const ui = await startUi(t);

  await ui.test(t, 'the namespaces page lists every namespace with its description and links', async (t, tab) => {
    await tab.open('/');
    const text = await tab.waitText(/Catalog/);
    t.match(text, /^Namespaces$/m);
    t.match(text, /Default\s+default/);
    t.match(text, /Catalog\s+catalog\s+Product catalogue experiments/);
    await tab.checkpoint(t, 'ui-namespaces');
    await tab.page.getByRole('link', { name: 'Catalog' }).first().click();
    await tab.waitText(/Flags in catalog/);
    t.match(tab.page.url(), /\/ui\/namespaces\/catalog\/flags$/);
  });

  await ui.test(t, 'the flags list: every flag with type and state; search and filters narrow it', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags');
    let text = await tab.waitText(/Showing 1–3 of 3 flags\./);
    t.match(text, /payment-provider\tPayment provider\tvariant\tenabled/);
    t.match(text, /dark-mode\tDark mode\tboolean\tenabled/);
    t.match(text, /new-checkout\tNew checkout\tboolean\tdisabled/);
    await tab.checkpoint(t, 'ui-flags');

    await page.getByLabel('Search').fill('dark');
    text = await tab.waitText(/Showing 1–1 of 1 flags \(3 in all\)\./);
    t.same(rowKeys(text), ['dark-mode'], 'search by key');
    await page.getByLabel('Search').fill('rewritten');
    text = await tab.waitText(/Showing 1–1 of 1 flags/);
    t.same(rowKeys(text), ['new-checkout'], 'search by description');
    await page.waitForURL(/[?&]q=rewritten(&|$)/); // the search is in the address
    await page.getByLabel('Search').fill('no such flag');
    await tab.waitText(/No flags match \(of 3\)\./);
    await page.getByLabel('Search').fill('');

    await page.getByLabel('Type').selectOption('boolean');
    text = await tab.waitText(/Showing 1–2 of 2 flags/);
    t.same(rowKeys(text), ['dark-mode', 'new-checkout'], 'type filter');
    await page.getByLabel('State').selectOption('disabled');
    text = await tab.waitText(/Showing 1–1 of 1 flags/);
    t.same(rowKeys(text), ['new-checkout'], 'type and state filters together');
    await page.getByLabel('Type').selectOption('variant');
    await tab.waitText(/No flags match/);
  });

  await ui.test(t, 'the flags list of a 60-flag namespace has two pages; filters count over all of them', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/catalog/flags');
    let text = await tab.waitText(/Showing 1–50 of 60 flags\./);
    t.match(text, /Page 1 of 2/);
    let keys = rowKeys(text);
    t.equal(keys.length, 50);
    t.equal(keys[0], 'catalog-flag-01');
    t.equal(keys[49], 'catalog-flag-50');
    t.ok(await page.getByRole('button', { name: 'Previous' }).isDisabled(), 'no page before the first');

    await page.getByRole('button', { name: 'Next' }).click();
    text = await tab.waitText(/Showing 51–60 of 60 flags\./);
    t.match(text, /Page 2 of 2/);
    keys = rowKeys(text);
    t.same(keys, Array.from({ length: 10 }, (_, i) => `catalog-flag-${51 + i}`));
    t.ok(await page.getByRole('button', { name: 'Next' }).isDisabled(), 'no page after the last');
    await page.waitForURL(/[?&]page=2(&|$)/); // the page is in the address

    // Every third flag is boolean, every fourth disabled: 20 boolean, 5 of them disabled.
    await page.getByLabel('Type').selectOption('boolean');
    text = await tab.waitText(/Showing 1–20 of 20 flags \(60 in all\)\./);
    t.notMatch(text, /Page \d of/, 'one page: no pager');
    await page.getByLabel('State').selectOption('disabled');
    text = await tab.waitText(/Showing 1–5 of 5 flags/);
    t.same(rowKeys(text), ['catalog-flag-12', 'catalog-flag-24', 'catalog-flag-36', 'catalog-flag-48', 'catalog-flag-60']);
  });

  await ui.test(t, 'the reference switcher: a branch from the list, then a commit id typed in', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags');
    let text = await tab.waitText(/payment-provider\tPayment provider\t/);
    t.match(text, /new-checkout\tNew checkout\tboolean\tdisabled/);
    const select = page.getByLabel('Reference', { exact: true });
    const options = await select.locator('option').allInnerTexts();
    t.same(
      options.map((o) => o.split(' · ').slice(0, 2).join(' · ')),
      [`main · ${ui.main.slice(0, 7)}`, `feature · ${ui.feature.slice(0, 7)}`],
      'the built references with their revisions',
    );

    await select.selectOption('feature');
    text = await tab.waitText(/Payment provider \(Adyen trial\)/);
    t.match(text, /new-checkout\tNew checkout\tboolean\tenabled/, 'the feature branch enables new-checkout');
    t.match(page.url(), /\/ui\/namespaces\/default\/flags\?ref=feature$/);

    await page.getByLabel('Other reference (branch, tag or commit id)').fill(ui.main);
    await page.getByRole('button', { name: 'Go' }).click();
    text = await tab.waitText(/payment-provider\tPayment provider\tvariant/);
    t.notMatch(text, /Adyen trial/);
    t.match(text, /new-checkout\tNew checkout\tboolean\tdisabled/, 'main again, by its commit id');
    t.equal(new URL(page.url()).searchParams.get('ref'), ui.main);
    t.equal(await select.inputValue(), ui.main, 'the switcher shows the typed reference');

    // The switch carries over to the links: the namespaces page of the same commit.
    await page.getByRole('link', { name: 'Namespaces' }).click();
    await tab.waitText(/Catalog/);
    t.equal(new URL(page.url()).searchParams.get('ref'), ui.main);
  });

  await ui.test(t, 'a variant flag: variants with attachments, default variant, metadata, rules with distributions', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags/payment-provider');
    let text = await tab.waitText(/Rule 2/);
    t.match(text, /^Payment provider$/m);
    t.match(text, /payment-provider\s+variant flag\s+enabled/);
    t.match(text, /Which payment provider checkout uses/);
    t.match(text, /Default variant: stripe/);
    const stripe = await page.locator('li.variant', { hasText: 'stripe' }).innerText();
    t.match(stripe, /stripe\s+default/);
    t.match(stripe, /Name\s+Stripe/);
    t.match(stripe, '{\n  "currencies": [\n    "eur",\n    "chf"\n  ],\n  "fee": 1.4\n}', 'the attachment pretty-printed (keys as the API orders them)');
    t.match(await page.locator('li.variant', { hasText: 'adyen' }).innerText(), /Attachment\s+none/);
    t.match(text, /Owner\s+payments-team\s+Lifecycle\s+not set/, 'the owner at the top (the lifecycle keys are not listed again under Metadata)');
    t.match(text, /Rule 1\s+Entities in segment eu\s+adyen 100 %/);
    t.match(text, /Rule 2\s+Entities in segment everyone\s+stripe 50 %\s+adyen 50 %/);
    await tab.checkpoint(t, 'ui-flag');

    // The feature branch moves the "everyone" distribution.
    await page.getByLabel('Reference', { exact: true }).selectOption('feature');
    text = await tab.waitText(/stripe 40 %/);
    t.match(text, /^Payment provider \(Adyen trial\)$/m);
    t.match(text, /Rule 2\s+Entities in segment everyone\s+stripe 40 %\s+adyen 60 %/);
    t.match(text, /Rule 1\s+Entities in segment eu\s+adyen 100 %/, 'rule 1 as it was');

    await page.getByRole('link', { name: 'eu', exact: true }).click();
    await tab.waitText(/^EU customers$/m);
    t.match(new URL(page.url()).pathname, '/ui/namespaces/default/segments/eu');
    t.equal(new URL(page.url()).searchParams.get('ref'), 'feature', 'the segment of the same reference');
  });

  await ui.test(t, 'a boolean flag: its rollouts in order down to everyone else', async (t, tab) => {
    await tab.open('/ui/namespaces/default/flags/dark-mode');
    const text = await tab.waitText(/everyone else/);
    t.match(text, /dark-mode\s+boolean flag\s+enabled/);
    t.notMatch(text, /Variants/, 'no variants section for a boolean flag');
    t.same(
      (await tab.page.locator('ol.rollouts > li').allInnerTexts()).map((l) => l.trim()),
      ['entities in segment beta → true', '25 % of entities → true', 'everyone else → true'],
    );
    await tab.checkpoint(t, 'ui-flag-boolean');
  });

  await ui.test(t, 'segments with their constraints in words; a segment and the flags using it', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/segments');
    let text = await tab.waitText(/3 segments\./);
    t.match(text, /Segments in default/);
    t.match(text, /everyone\s+Everyone\s+ALL\s+none \(every entity\)/);
    t.match(text, /eu\s+EU customers\s+ANY\s+region is "eu"\s+country is one of \[de, fr, it\]/);
    t.match(text, /beta\s+Beta testers\s+ALL\s+plan is "beta"\s+age ≥ 18/);
    await tab.checkpoint(t, 'ui-segments');

    await page.getByRole('link', { name: 'eu', exact: true }).click();
    text = await tab.waitText(/^EU customers$/m);
    t.match(text, /eu\s+match ANY/);
    t.match(text, /Customers billed in the European Union/);
    t.match(text, /An entity is in this segment when any of these constraints match:\s+region is "eu"\s+country is one of \[de, fr, it\]/);
    await page.getByRole('button', { name: 'Find the flags that use this segment' }).click();
    text = await tab.waitText(/1 flag uses this segment\./);
    t.match(text, /payment-provider \(Payment provider\): rule 1/i);
    await tab.checkpoint(t, 'ui-segment');
  });

  await ui.test(t, 'at 375 px wide the flag page does not scroll sideways; the dark theme', async (t, tab) => {
    const { page } = tab;
    await atPhoneWidth(t, tab, '/ui/namespaces/default/flags/payment-provider', /Rule 2/);
    await tab.checkpoint(t, 'ui-flag-375');

    await page.setViewportSize({ width: 800, height: 480 });
    await page.emulateMedia({ colorScheme: 'dark' });
    t.equal(await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches"), true);
    await tab.checkpoint(t, 'ui-flag-dark'); // axe checks the contrast of the dark theme too
  });

  await ui.test(t, 'keyboard only: the skip link first, then the page, the search field and into a flag', async (t, tab) => {
    const { page } = tab;
    const focused = () => page.evaluate<string>("(document.activeElement?.id || document.activeElement?.textContent || '').trim()");
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/Showing 1–3 of 3 flags/);
    await page.keyboard.press('Tab');
    t.equal(await focused(), 'Skip to content', 'on a page load the first stop is the skip link');
    await page.keyboard.press('Enter');
    const inPage: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      inPage.push(await focused());
    }
    t.same(inPage, ['Namespaces', 'Flags', 'Segments', 'flag-search'], 'after skipping: the page, past the header, to the search field');
    await page.keyboard.type('rewritten');
    await tab.waitText(/Showing 1–1 of 1 flags/);
    const stops: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      stops.push(await focused());
    }
    t.same(stops, ['flag-type', 'flag-enabled', 'new-checkout'], 'then the filters and the one flag left, in reading order');
    await page.keyboard.press('Enter');
    await tab.waitText(/^New checkout$/m);
    t.equal(await focused(), 'New checkout', 'after the navigation, focus is on the new page heading');

    // Backwards from the heading to the top of the document: the header in reading order, the skip link first.
    const back: string[] = [];
    while (back.length < 20 && back[0] !== 'Skip to content') {
      await page.keyboard.press('Shift+Tab');
      back.unshift(await focused());
    }
    t.same(back, ['Skip to content', 'vexil', 'Flags', 'Console', 'Entity', 'Diff', 'Status', 'History', 'ref-select', 'ref-typed', 'Go', 'Namespaces', 'Flags', 'Segments'], 'the focus order');
  });

  await ui.test(t, 'at 375 px wide the flags list does not scroll sideways', async (t, tab) => {
    await atPhoneWidth(t, tab, '/ui/namespaces/catalog/flags', /Showing 1–50 of 60 flags/);
    await tab.checkpoint(t, 'ui-flags-375');
  });
});
