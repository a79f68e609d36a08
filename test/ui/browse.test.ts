/**
 * Browsing flag state in the web UI, in headless Chromium against a real `vexil serve` serving a
 * Git repository with two branches (test/ui/fixtures/: `main`, and `feature` which renames
 * payment-provider, moves its "everyone" rollout 50/50 → 40/60 and enables new-checkout):
 * home opens the flags of the namespace last used, the header's namespace switcher, the list of
 * namespaces; the flags list (what each flag serves, owner, description) with search, type and
 * state filters, sortable columns, page sizes, jump to page and its pages (the 60-flag `catalog`
 * namespace); the reference switcher (a built branch from the list, a commit id typed in);
 * a variant flag (summary first, rules, variants with folded attachments, metadata, on both
 * branches, "differs from main" on feature) and a boolean flag (rollouts); a disabled variant
 * flag's rules marked as not applied; the segments (search, "used in N flags") and a segment
 * (constraints in words, the flags using it); keyboard navigation; the flags list, segments and a
 * flag at 375 px wide; the dark theme. Every page: no console error, axe-core clean, a screenshot.
 */
import tap, { type Test } from 'tap';
import type { Page } from 'playwright-core';
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

/** The rows of the flags table, each cell's text with its white space collapsed, cells joined by " | ". */
async function rows(page: Page): Promise<string[]> {
  const trs = await page.locator('table.flags tbody tr').all();
  return Promise.all(trs.map(async (tr) => (await tr.locator('td').allInnerTexts()).map((c) => c.replace(/\s+/g, ' ').trim()).join(' | ')));
}

/** The keys in the flags table, in order. */
async function rowKeys(page: Page): Promise<string[]> {
  return page.locator('table.flags tbody tr td:first-child').allInnerTexts();
}

t.test('browse the flag state of a Git repository', async (t) => {
  const ui = await startUi(t);

  await ui.test(t, 'home opens the flags of the namespace last used; the header switches namespace; /ui/namespaces lists them', async (t, tab) => {
    const { page } = tab;
    await tab.open('/');
    await tab.waitText(/^Flags in default$/m);
    t.equal(new URL(page.url()).pathname, '/ui/namespaces/default/flags', 'nothing remembered yet: default');
    const switcher = page.locator('#ns-select');
    t.same(await switcher.locator('option').allInnerTexts(), ['Catalog (catalog)', 'Default (default)', 'Growth (growth)'], 'the namespaces of the reference');
    await switcher.selectOption('catalog');
    await tab.waitText(/^Flags in catalog$/m);
    t.match(page.url(), /\/ui\/namespaces\/catalog\/flags$/);

    await tab.open('/');
    await tab.waitText(/^Flags in catalog$/m);
    t.equal(new URL(page.url()).pathname, '/ui/namespaces/catalog/flags', 'the namespace last used, remembered');
    t.equal(await switcher.inputValue(), 'catalog');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Flags' }).click();
    await tab.waitText(/^Flags in catalog$/m);

    // On the segments, the switcher keeps to segments.
    await page.getByRole('navigation', { name: 'Namespace catalog' }).getByRole('link', { name: 'Segments' }).click();
    await tab.waitText(/^Segments in catalog$/m);
    await switcher.selectOption('default');
    await tab.waitText(/^Segments in default$/m);
    t.equal(new URL(page.url()).pathname, '/ui/namespaces/default/segments');

    // Where it would change nothing, there is no switcher.
    await tab.open('/ui/status');
    await tab.waitText(/Status/);
    t.equal(await page.locator('#ns-select').count(), 0, 'no namespace switcher on Status');

    // The list of every namespace is still there.
    await tab.open('/ui/namespaces');
    const text = await tab.waitText(/Catalog/);
    t.match(text, /^Namespaces$/m);
    t.match(text, /Default\s+default/);
    t.match(text, /Catalog\s+catalog\s+Product catalogue experiments/);
    await tab.checkpoint(t, 'ui-namespaces');
    await page.getByRole('link', { name: 'Catalog' }).first().click();
    await tab.waitText(/Flags in catalog/);
    t.match(page.url(), /\/ui\/namespaces\/catalog\/flags$/);
    await tab.open('/ui/namespaces/default/flags'); // leave `default` remembered for the tests below
    await tab.waitText(/Flags in default/);
  });

  await ui.test(t, 'the flags list: what each flag serves, description, owner, type and state; search and filters narrow it', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags');
    let text = await tab.waitText(/Showing 1–3 of 3 flags\./);
    await tab.waitText(/rules, else stripe/); // the outline has come
    t.same(await rows(page), [
      'dark-mode | Dark mode The dark theme of the storefront | True | — | boolean | enabled 1 warning',
      'new-checkout | New checkout The rewritten checkout | False | — | boolean | disabled',
      'payment-provider | Payment provider Which payment provider checkout uses | stripe 2 rules, else stripe | payments-team | variant | enabled',
    ]);
    await tab.checkpoint(t, 'ui-flags');

    await page.getByLabel('Search').fill('dark');
    text = await tab.waitText(/Showing 1–1 of 1 flag \(3 in all\)\./);
    t.same(await rowKeys(page), ['dark-mode'], 'search by key');
    await page.getByLabel('Search').fill('rewritten');
    text = await tab.waitText(/Showing 1–1 of 1 flag\b/);
    t.same(await rowKeys(page), ['new-checkout'], 'search by description');
    await page.waitForURL(/[?&]q=rewritten(&|$)/); // the search is in the address
    await page.getByLabel('Search').fill('no such flag');
    await tab.waitText(/No flags match \(of 3\)\./);
    await page.getByLabel('Search').fill('');

    await page.getByLabel('Type').selectOption('boolean');
    text = await tab.waitText(/Showing 1–2 of 2 flags/);
    t.same(await rowKeys(page), ['dark-mode', 'new-checkout'], 'type filter');
    await page.getByLabel('State').selectOption('disabled');
    text = await tab.waitText(/Showing 1–1 of 1 flag\b/);
    t.same(await rowKeys(page), ['new-checkout'], 'type and state filters together');
    await page.getByLabel('Type').selectOption('variant');
    await tab.waitText(/No flags match/);
    await page.getByLabel('Type').selectOption('all');
    await page.getByLabel('State').selectOption('all');
    await tab.waitText(/Showing 1–3 of 3 flags/);

    // Sortable columns: a button in each header, aria-sort on the sorted one, in the address.
    await page.getByRole('button', { name: /^Serves/ }).click();
    await page.waitForURL(/[?&]sort=serves(&|$)/);
    t.same(await rowKeys(page), ['new-checkout', 'payment-provider', 'dark-mode'], 'by what they serve: False, stripe, True');
    t.equal(await page.locator('th[aria-sort]').getAttribute('aria-sort'), 'ascending');
    await page.getByRole('button', { name: /^Serves/ }).click();
    await page.waitForURL(/[?&]order=desc(&|$)/);
    t.same(await rowKeys(page), ['dark-mode', 'payment-provider', 'new-checkout'], 'the other way');
    t.equal(await page.locator('th[aria-sort]').getAttribute('aria-sort'), 'descending');
    await page.getByRole('button', { name: /^Owner/ }).click();
    await page.waitForURL(/[?&]sort=owner(&|$)/); // the address follows after the render
    t.same(await rowKeys(page), ['dark-mode', 'new-checkout', 'payment-provider'], 'by owner: none first, key order among equals');
    await page.reload();
    await tab.waitText(/Showing 1–3 of 3 flags/);
    t.same(await rowKeys(page), ['dark-mode', 'new-checkout', 'payment-provider'], 'the sort survives a reload (it is in the address)');
    t.match(await page.locator('th[aria-sort]').locator('button').textContent(), /^Owner, sorted ascending ▲$/);
  });

  await ui.test(t, 'a disabled boolean flag whose rollout turns it on for 30% reads "varies … True", as the evaluator answers', async (t, tab) => {
    await tab.open('/ui/namespaces/growth/flags');
    await tab.waitText(/for 30%/);
    const row = (await rows(tab.page)).find((r) => r.startsWith('onboarding-tour'));
    t.equal(row, 'onboarding-tour | Onboarding tour The guided tour for new accounts | varies True for 30% of entities; else False | @growth-team | boolean | disabled');
    // The real evaluator over sample entities gives both values.
    const seen = new Set<boolean>();
    for (let i = 0; i < 40; i++) {
      const r = await ui.post('/evaluate/v1/boolean', { namespaceKey: 'growth', flagKey: 'onboarding-tour', entityId: `user-${i}`, context: {} });
      t.equal(r.status, 200);
      seen.add(r.body.enabled as boolean);
    }
    t.same([...seen].sort(), [false, true], 'some sampled entities get true, others false');
  });

  await ui.test(t, 'the flags list of a 60-flag namespace has two pages; filters count over all of them', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/catalog/flags');
    let text = await tab.waitText(/Showing 1–50 of 60 flags\./);
    t.match(text, /Page 1 of 2/);
    let keys = await rowKeys(page);
    t.equal(keys.length, 50);
    t.equal(keys[0], 'catalog-flag-01');
    t.equal(keys[49], 'catalog-flag-50');
    t.ok(await page.getByRole('button', { name: 'Previous' }).isDisabled(), 'no page before the first');

    // Next from the bottom of the page: the view goes back to the top of the list, focus with it.
    await page.setViewportSize({ width: 1280, height: 600 });
    await page.getByRole('button', { name: 'Next' }).scrollIntoViewIfNeeded();
    t.ok((await page.evaluate<number>('window.scrollY')) > 300, 'scrolled down to the pager');
    await page.getByRole('button', { name: 'Next' }).click();
    text = await tab.waitText(/Showing 51–60 of 60 flags\./);
    t.match(text, /Page 2 of 2/);
    t.equal(await page.evaluate<number>('window.scrollY'), 0, 'back at the top');
    t.equal(await page.evaluate<string>("document.activeElement?.id ?? ''"), 'flag-count', 'focus on the count line above the list');
    keys = await rowKeys(page);
    t.same(keys, Array.from({ length: 10 }, (_, i) => `catalog-flag-${51 + i}`));
    t.ok(await page.getByRole('button', { name: 'Next' }).isDisabled(), 'no page after the last');
    await page.waitForURL(/[?&]page=2(&|$)/); // the page is in the address

    // Page size and jump to a page.
    await page.getByLabel('Per page').selectOption('25');
    text = await tab.waitText(/Showing 1–25 of 60 flags\./);
    t.match(text, /Page 1 of 3/);
    await page.waitForURL(/[?&]size=25(&|$)/);
    await page.getByLabel('Go to page').fill('3');
    await page.getByLabel('Go to page').press('Enter');
    text = await tab.waitText(/Showing 51–60 of 60 flags\./);
    t.match(text, /Page 3 of 3/);
    await page.getByLabel('Per page').selectOption('50');
    await tab.waitText(/Showing 1–50 of 60 flags\./);

    // Every third flag is boolean, every fourth disabled: 20 boolean, 5 of them disabled.
    await page.getByLabel('Type').selectOption('boolean');
    text = await tab.waitText(/Showing 1–20 of 20 flags \(60 in all\)\./);
    t.notMatch(text, /Page \d of/, 'one page: no pager');
    await page.getByLabel('State').selectOption('disabled');
    text = await tab.waitText(/Showing 1–5 of 5 flags/);
    t.same(await rowKeys(page), ['catalog-flag-12', 'catalog-flag-24', 'catalog-flag-36', 'catalog-flag-48', 'catalog-flag-60']);
  });

  await ui.test(t, 'the reference switcher: a branch from the list, then a commit id typed in', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags');
    let text = await tab.waitText(/Showing 1–3 of 3 flags/);
    t.ok((await rows(page)).includes('new-checkout | New checkout The rewritten checkout | False | — | boolean | disabled'));
    const select = page.getByLabel('Reference', { exact: true });
    const options = await select.locator('option').allInnerTexts();
    t.same(
      options.map((o) => o.split(' · ').slice(0, 2).join(' · ')),
      [`main · ${ui.main.slice(0, 7)}`, `feature · ${ui.feature.slice(0, 7)}`],
      'the built references with their revisions',
    );

    await select.selectOption('feature');
    text = await tab.waitText(/Payment provider \(Adyen trial\)/);
    await tab.waitText(/The rewritten checkout\s+True/);
    t.ok((await rows(page)).includes('new-checkout | New checkout The rewritten checkout | True | — | boolean | enabled'), 'the feature branch enables new-checkout');
    t.match(page.url(), /\/ui\/namespaces\/default\/flags\?ref=feature$/);

    await page.getByLabel('Other reference (branch, tag or commit id)').fill(ui.main);
    await page.getByRole('button', { name: 'Go' }).click();
    text = await tab.waitText(/Payment provider\n/);
    t.notMatch(text, /Adyen trial/);
    await tab.waitText(/The rewritten checkout\s+False/);
    t.ok((await rows(page)).includes('new-checkout | New checkout The rewritten checkout | False | — | boolean | disabled'), 'main again, by its commit id');
    t.equal(new URL(page.url()).searchParams.get('ref'), ui.main);
    t.equal(await select.inputValue(), ui.main, 'the switcher shows the typed reference');

    // The switch carries over to the links and the namespace switcher: the segments of the same commit.
    await page.getByRole('link', { name: 'Segments' }).click();
    await tab.waitText(/Segments in default/);
    t.equal(new URL(page.url()).searchParams.get('ref'), ui.main);
    await page.locator('#ns-select').selectOption('catalog');
    await tab.waitText(/Segments in catalog/);
    t.equal(new URL(page.url()).searchParams.get('ref'), ui.main);
  });

  await ui.test(t, 'a variant flag: what it serves first, then rules, variants (attachments folded), metadata', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags/payment-provider');
    let text = await tab.waitText(/Rule 2/);
    t.match(text, /^Payment provider$/m);
    t.match(text, /payment-provider\s+variant flag\s+enabled/);
    t.match(text, /Which payment provider checkout uses/);
    t.match(
      text,
      /What it serves\s+Entities in segment eu get adyen; then every entity gets stripe 50% and adyen 50%\./,
      'the summary in words (segment everyone has no constraints: nobody is left for the default)',
    );
    const order = ['What it serves', 'Rules', 'Variants', 'Metadata', 'Checks'];
    t.same(await page.locator('main h2').allInnerTexts(), order, 'the summary and the rules before the variants');
    t.match(text, /Default variant: stripe/);
    const stripe = page.locator('li.variant', { hasText: 'stripe' });
    t.match(await stripe.innerText(), /stripe\s+default/);
    t.match(await stripe.innerText(), /Name\s+Stripe/);
    t.notMatch(await stripe.innerText(), /currencies/, 'the attachment is folded');
    await stripe.getByText(/^Show \(7 lines of JSON\)$/).click();
    t.match(await stripe.innerText(), '{\n  "currencies": [\n    "eur",\n    "chf"\n  ],\n  "fee": 1.4\n}', 'the attachment pretty-printed (keys as the API orders them)');
    t.match(await page.locator('li.variant', { hasText: 'adyen' }).innerText(), /Attachment\s+none/);
    t.match(text, /Metadata\s+Owner\s+payments-team\s+Lifecycle\s+not set/, 'the owner under Metadata (the lifecycle keys are not listed twice)');
    t.match(text, /Rule 1\s+Entities in segment eu\s+adyen 100%/);
    t.match(text, /Rule 2\s+Entities in segment everyone\s+stripe 50%\s+adyen 50%/);
    t.notMatch(text, /Differs from|The same on/, 'on the default reference: nothing to compare');
    await tab.checkpoint(t, 'ui-flag');

    // The feature branch moves the "everyone" distribution: the page says it differs from main.
    await page.getByLabel('Reference', { exact: true }).selectOption('feature');
    text = await tab.waitText(/Differs from main/);
    t.match(text, /^Payment provider \(Adyen trial\)$/m);
    t.match(text, /Differs from main, the default reference: see the diff of main and feature\./);
    t.match(text, /Rule 2\s+Entities in segment everyone\s+stripe 40%\s+adyen 60%/);
    t.match(text, /Rule 1\s+Entities in segment eu\s+adyen 100%/, 'rule 1 as it was');
    await tab.checkpoint(t, 'ui-flag-differs');
    const diff = new URL((await page.getByRole('link', { name: 'see the diff of main and feature' }).getAttribute('href'))!, ui.url);
    t.same([diff.pathname, diff.searchParams.get('base'), diff.searchParams.get('head'), diff.searchParams.get('namespace')], ['/ui/diff', 'main', 'feature', 'default']);

    await page.getByRole('link', { name: 'eu', exact: true }).click();
    await tab.waitText(/^EU customers$/m);
    t.match(new URL(page.url()).pathname, '/ui/namespaces/default/segments/eu');
    t.equal(new URL(page.url()).searchParams.get('ref'), 'feature', 'the segment of the same reference');
  });

  await ui.test(t, 'a boolean flag: its rollouts in order down to everyone else', async (t, tab) => {
    await tab.open('/ui/namespaces/default/flags/dark-mode');
    const text = await tab.waitText(/everyone else/);
    t.match(text, /dark-mode\s+boolean flag\s+enabled/);
    t.match(text, /What it serves\s+Every entity gets true\./);
    t.notMatch(text, /Variants/, 'no variants section for a boolean flag');
    t.same(
      (await tab.page.locator('ol.rollouts > li').allInnerTexts()).map((l) => l.trim()),
      ['entities in segment beta → true', '25% of entities → true', 'everyone else → true'],
    );
    await tab.checkpoint(t, 'ui-flag-boolean');

    // On feature, dark-mode is as on main: said, without a link.
    await tab.open('/ui/namespaces/default/flags/dark-mode?ref=feature');
    await tab.waitText(/The same on main, the default reference\./);
  });

  await ui.test(t, 'a disabled variant flag: every entity gets the default; its rules marked "not applied", not only by colour', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/catalog/flags/catalog-flag-04');
    const text = await tab.waitText(/Rule 1/);
    t.match(text, /What it serves\s+Disabled: every entity gets the default variant variant-a\.\s+Its 1 rule applies only once it is enabled\./);
    t.match(text, /Rule 1\s*not applied: flag disabled\s+Entities in segment shoppers/);
    t.equal(await page.locator('ol.rules.inactive').count(), 1, 'drawn dashed and faded (styles.css)');
    t.equal(await page.locator('ol.rules.inactive > li').evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { borderTopStyle: string } }).getComputedStyle(el).borderTopStyle), 'dashed');
    await tab.checkpoint(t, 'ui-flag-disabled-rules');
    await tab.open('/ui/namespaces/growth/flags/colors');
    await tab.waitText(/Rule 2/);
    t.equal(await page.locator('ol.rules.inactive').count(), 0, 'an enabled flag: rules drawn in full');
  });

  await ui.test(t, 'segments with their constraints in words and uses; search; a segment and the flags using it', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/segments');
    let text = await tab.waitText(/3 segments\./);
    await tab.waitText(/1 flag$/m);
    t.match(text, /Segments in default/);
    text = await tab.text();
    t.match(text, /everyone\s+Everyone\s+ALL\s+none \(every entity\)\s+1 flag/);
    t.match(text, /eu\s+EU customers\s+ANY\s+region is "eu"\s+country is one of \[de, fr, it\]\s+1 flag/);
    t.match(text, /beta\s+Beta testers\s+ALL\s+plan is "beta"\s+age ≥ 18\s+1 flag/);
    await tab.checkpoint(t, 'ui-segments');
    await page.getByLabel('Search').fill('country');
    text = await tab.waitText(/1 segment \(3 in all\)\./);
    t.match(text, /EU customers/, 'found by a constraint in words');
    t.notMatch(text, /Beta testers/);
    await page.waitForURL(/[?&]q=country(&|$)/);
    await page.getByLabel('Search').fill('zzz');
    await tab.waitText(/No segments match \(of 3\)\./);
    await page.getByLabel('Search').fill('');
    await tab.waitText(/3 segments\./);

    await page.getByRole('link', { name: 'eu', exact: true }).click();
    text = await tab.waitText(/^EU customers$/m);
    t.match(text, /eu\s+match ANY/);
    t.match(text, /Customers billed in the European Union/);
    t.match(text, /An entity is in this segment when any of these constraints match:\s+region is "eu"\s+country is one of \[de, fr, it\]/);
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
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      inPage.push(await focused());
    }
    t.same(inPage.slice(0, 3), ['Flags', 'Segments', 'flag-search'], 'after skipping: the page, past the header, to the search field');
    await page.keyboard.type('rewritten');
    await tab.waitText(/Showing 1–1 of 1 flag\b/);
    const stops: string[] = [];
    for (let i = 0; i < 9; i++) {
      await page.keyboard.press('Tab');
      stops.push((await focused()).replace(/\s+/g, ' '));
    }
    t.same(
      stops,
      ['flag-type', 'flag-enabled', 'Key, sorted ascending ▲', 'Name, sort ↕', 'Serves, sort ↕', 'Owner, sort ↕', 'Type, sort ↕', 'State, sort ↕', 'new-checkout'],
      'then the filters, the sort buttons and the one flag left, in reading order',
    );
    await page.keyboard.press('Enter');
    await tab.waitText(/^New checkout$/m);
    t.equal(await focused(), 'New checkout', 'after the navigation, focus is on the new page heading');

    // Backwards from the heading to the top of the document: the header in reading order, the skip link first.
    const back: string[] = [];
    while (back.length < 20 && back[0] !== 'Skip to content') {
      await page.keyboard.press('Shift+Tab');
      back.unshift(await focused());
    }
    t.same(back, ['Skip to content', 'vexil', 'Flags', 'Console', 'Entity', 'Diff', 'Status', 'History', 'ns-select', 'ref-select', 'ref-typed', 'Go', 'Flags', 'Segments'], 'the focus order');
  });

  await ui.test(t, 'at 375 px wide the flags list is a list of cards keeping the state; segments and a segment fit', async (t, tab) => {
    const { page } = tab;
    await atPhoneWidth(t, tab, '/ui/namespaces/default/flags', /Showing 1–3 of 3 flags/);
    await tab.waitText(/rules, else stripe/);
    const state = page.locator('table.flags tbody tr', { hasText: 'new-checkout' }).locator('td[data-label="State"]');
    t.ok(await state.isVisible(), 'the state cell is shown');
    t.match(await state.innerText(), /disabled/);
    const box = (await state.boundingBox())!;
    t.ok(box.x >= 0 && box.x + box.width <= 375, 'inside the screen');
    await tab.checkpoint(t, 'ui-flags-375');
    await atPhoneWidth(t, tab, '/ui/namespaces/catalog/flags', /Showing 1–50 of 60 flags/);
    await tab.checkpoint(t, 'ui-flags-catalog-375');
    await atPhoneWidth(t, tab, '/ui/namespaces/default/segments', /1 flag$/m);
    await tab.checkpoint(t, 'ui-segments-375');
    await atPhoneWidth(t, tab, '/ui/namespaces/default/segments/eu', /1 flag uses this segment/);
    await atPhoneWidth(t, tab, '/ui/namespaces', /Product catalogue experiments/);
    await tab.checkpoint(t, 'ui-namespaces-375');
    await atPhoneWidth(t, tab, '/ui/namespaces/default/flags/payment-provider?ref=feature', /Differs from main/);
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.checkpoint(t, 'ui-flag-differs-375-dark');
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/rules, else stripe/);
    await tab.checkpoint(t, 'ui-flags-375-dark');
    await tab.open('/ui/namespaces/default/segments');
    await tab.waitText(/1 flag$/m);
    await tab.checkpoint(t, 'ui-segments-375-dark');
  });

  await ui.test(t, 'the dark theme at full width: flags list and segments', async (t, tab) => {
    await tab.page.emulateMedia({ colorScheme: 'dark' });
    await tab.open('/ui/namespaces/growth/flags');
    await tab.waitText(/for 30%/);
    await tab.checkpoint(t, 'ui-flags-dark');
    await tab.open('/ui/namespaces/growth/segments');
    await tab.waitText(/Used in/);
    await tab.checkpoint(t, 'ui-segments-dark');
  });
});
