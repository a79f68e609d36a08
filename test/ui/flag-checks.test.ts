/**
 * The flag page's lifecycle and checks, in headless Chromium against a real `vexil serve` serving a
 * Git repository (test/ui/fixtures/main/growth.features.yml: flags that pass validation yet trip
 * the semantic checks, with owner, lifecycle and expires in their metadata): the flags list's badge
 * counting a flag's warnings; a flag past its `expires` date with its checks (message, hint,
 * location, and the check of a segment it uses, linked); a flag no check concerns; the page at
 * 375 px and in the dark theme. Every page: no console error, axe-core clean, a screenshot.
 */
import tap from 'tap';
import { startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);

t.test('a flag page shows its owner, lifecycle and the checks that concern it', async (t) => {
  const ui = await startUi(t);

  await ui.test(t, 'the flags list: a badge with the number of warnings of each flag that has some', async (t, tab) => {
    await tab.open('/ui/namespaces/growth/flags');
    await tab.waitText(/3 warnings/);
    const text = await tab.waitText(/for 30%/);
    t.match(text, /Beta access\s[^\t]*\s+True\s+@growth-team\s+boolean\s+enabled 3 warnings/);
    t.match(text, /Colors\s[^\t]*\s+no variant\s+2 rules, else no variant\s+@design\s+variant\s+enabled 3 warnings/);
    t.match(text, /Onboarding tour\s[^\t]*\s+varies\s+True for 30% of entities; else False\s+@growth-team\s+boolean\s+disabled\s*$/m, 'no badge for a flag without warnings');
    await tab.checkpoint(t, 'ui-flags-checks');
  });

  await ui.test(t, 'a temporary flag past its date: owner, lifecycle, how long ago it expired, its checks', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/growth/flags/beta-access');
    const text = await tab.waitText(/About segment/);
    t.match(text, /Owner\s+@growth-team\s+Lifecycle\s+temporary\s+Expires\s+2026-01-31\s*expired \d+ days ago/);
    const items = await page.locator('ul.checks > li').allInnerTexts();
    t.equal(items.length, 4, 'its three checks and the one of the segment its rollout uses');
    t.match(items[0], words('warning flag.rollouts.no-effect'));
    t.match(items[0], /the rollouts of flag `beta-access` cannot change its outcome/);
    t.match(items[0], /Hint: /);
    t.match(items[0], words('At growth.features.yml:15:5'));
    t.match(items[2], /temporary flag `beta-access` \(owner @growth-team\) expired on 2026-01-31/);
    t.match(items[2], words('At growth.features.yml:20:7'));
    t.match(items[3], /segment `beta-users` matches no entity/);
    t.match(items[3], words('About segment beta-users, which this flag uses.'));
    t.match(items[3], words('At growth.features.yml:60:9'));
    // The lifecycle keys are shown once, under Metadata, not again as other metadata.
    t.equal(await page.locator('section[aria-labelledby="metadata-heading"] dl').count(), 1, 'only the lifecycle list');
    await tab.checkpoint(t, 'ui-flag-checks');

    await page.getByRole('link', { name: 'beta-users', exact: true }).first().click();
    await tab.waitText(/^Beta users$/m);
    t.match(new URL(page.url()).pathname, '/ui/namespaces/growth/segments/beta-users');
  });

  await ui.test(t, 'a flag no check concerns, with an expiry date still ahead', async (t, tab) => {
    await tab.open('/ui/namespaces/growth/flags/onboarding-tour');
    const text = await tab.waitText(/No check concerns this flag\./);
    t.match(text, /Owner\s+@growth-team\s+Lifecycle\s+temporary\s+Expires\s+2099-12-31/);
    t.notMatch(text, /expired/);
  });

  await ui.test(t, 'a flag without lifecycle metadata says so', async (t, tab) => {
    await tab.open('/ui/namespaces/default/flags/new-checkout');
    const text = await tab.waitText(/No check concerns this flag\./);
    t.match(text, /Owner\s+not set\s+Lifecycle\s+not set\s+Expires\s+not set/);
  });

  await ui.test(t, 'at 375 px wide and in the dark theme', async (t, tab) => {
    const { page } = tab;
    await page.setViewportSize({ width: 375, height: 900 });
    await tab.open('/ui/namespaces/growth/flags/colors');
    const text = await tab.waitText(/Rule 2/);
    t.match(text, /Owner\s+@design\s+Lifecycle\s+permanent\s+Expires\s+not set/);
    t.match(text, /20% of the entities rule 1 of flag `colors` matches get no variant/);
    const width = await tab.scrollWidth();
    t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
    await tab.checkpoint(t, 'ui-flag-checks-375');

    await page.setViewportSize({ width: 800, height: 900 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.open('/ui/namespaces/growth/flags/beta-access');
    await tab.waitText(/About segment/);
    await tab.checkpoint(t, 'ui-flag-checks-dark'); // axe checks the contrast of the dark theme too
  });
});
