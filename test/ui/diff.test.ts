/**
 * The diff page in headless Chromium against a real `vexil serve` on a real Git repository: base
 * main, head feature (the "everyone" rollout of payment-provider moves 50/50 → 40/60, its name
 * changes, new-checkout is enabled). The page shows each change in words and the impact preview,
 * with the same figures as `GET /api/v1/diff` for the same comparison; its address can be shared
 * (opening it shows the same comparison); a commit id works as base.
 *
 * As a review tool, against branch `review` (test/ui/fixtures/review: a changed segment read by a
 * flag whose sample shows no change, a rollout moved beyond the guard, a protected flag removed, a
 * flag added, a head policy with guards): every flag reading the changed segment is listed, added
 * and removed flags show their summary, guard findings sit beside their flags, "Copy as Markdown"
 * writes exactly what `vexil diff --format markdown` prints for the same refs and impact, "Copy
 * link" the address; 375 px without sideways scroll, axe clean in both themes. A comparison of 120
 * added flags starts collapsed, with the filter's counts, and draws 100 entries at first.
 */
import tap from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { runCli } from '../cli/run-cli.js';
import { UI_FIXTURES, startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);

/** The collapsible entry of a flag or segment, found by the key its summary line shows. */
const entry = (page: Page, key: string) =>
  page.locator('details', { has: page.locator(':scope > summary code', { hasText: new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });

interface Impact {
  namespace: string;
  flag: string;
  evaluated: number;
  changed: number;
  transitions: { from: string; to: string; count: number }[];
}

t.test('the diff page between two branches', async (t) => {
  const ui = await startUi(t);
  const short = (id: string) => id.slice(0, 7);
  const apiDiff = async (query: string) => (await fetch(`${ui.url}/api/v1/diff?${query}`)).json() as Promise<{ impact: { flags: Impact[] } }>;

  await ui.test(t, 'base main, head feature: the changed rollout, the other changes and their impact', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/diff');
    await tab.waitText(/Choose a base and a head, then Compare\./);
    t.equal(await page.getByLabel('Base reference').inputValue(), 'main', 'the default reference is the base to start with');
    await page.getByLabel('Head reference').fill('feature');
    await page.getByRole('button', { name: 'Compare' }).click();
    const text = await tab.waitText(/Impact:/);

    t.match(text, words(`main (${short(ui.main)}) → feature (${short(ui.feature)})`));
    t.match(text, words('2 flags changed.'));
    t.match(text, /default\s+0\s+0\s+2\s+0\s+0\s+0/, 'the summary row of namespace default');
    const payment = await entry(page, 'payment-provider').innerText();
    t.match(payment, /flag\s+payment-provider\s+changed\s+variant/);
    t.match(payment, words('rule 2: adyen 50% → 60%'), 'the rollout of adyen moved from 50 to 60');
    t.match(payment, words('rule 2: stripe 50% → 40%'), 'the rollout of stripe moved from 50 to 40');
    t.match(payment, words('name "Payment provider" → "Payment provider (Adyen trial)"'), 'the name change');

    // The impact the page shows is the API's for the same comparison.
    const api = await apiDiff('base=main&head=feature&impact=10000');
    const pay = api.impact.flags.find((f) => f.flag === 'payment-provider')!;
    t.same(pay.transitions.map((x) => `${x.from}→${x.to}`), ['stripe→adyen'], 'about a tenth move stripe → adyen');
    const share = `${((100 * pay.changed) / pay.evaluated).toFixed(1)}%`;
    t.match(payment, words(`Impact: ${share} of 10,000 entities move stripe → adyen`));
    t.match(payment, words(`stripe adyen ${pay.transitions[0]!.count.toLocaleString('en-US')} ${share}`), 'the transition row');

    const checkout = await entry(page, 'new-checkout').innerText();
    t.match(checkout, /new-checkout\s+changed\s+boolean/);
    t.match(checkout, words('enabled (was disabled)'));
    t.match(checkout, words('Impact: 100.0% of 10,000 entities move false → true'));
    t.notMatch(text, /dark-mode/, 'an unchanged flag is not listed');
    await tab.checkpoint(t, 'ui-diff');

    // The address names the comparison: opened afresh, it shows the same.
    await page.waitForURL(/[?&]head=feature(&|$)/);
    const shared = new URL(page.url());
    t.same([shared.searchParams.get('base'), shared.searchParams.get('head'), shared.searchParams.get('impact')], ['main', 'feature', '10000']);
    await tab.open(`${shared.pathname}${shared.search}`);
    t.match(await tab.waitText(/Impact:/), words(`Impact: ${share} of 10,000 entities move stripe → adyen`), 'the shared address shows the same comparison');
  });

  await ui.test(t, 'a commit id as base, head feature, without the impact preview; swap; Back and Forward', async (t, tab) => {
    const { page } = tab;
    await tab.open(`/ui/diff?base=${ui.main}&head=feature&impact=0`);
    const text = await tab.waitText(/2 flags changed\./);
    t.match(text, words(`${ui.main} (${short(ui.main)}) → feature (${short(ui.feature)})`));
    t.notMatch(text, /Impact:/, 'no impact preview asked');
    await page.getByRole('button', { name: 'Swap base and head' }).click();
    await page.getByRole('button', { name: 'Compare' }).click();
    const swapped = await tab.waitText(words(`feature (${short(ui.feature)}) → ${ui.main}`));
    t.match(swapped, words('rule 2: adyen 60% → 50%'), 'the mirror image: adyen back from 60 to 50');
    t.match(swapped, words('disabled (was enabled)'));

    // Each comparison is a history entry: Back shows the one before, form included.
    await page.goBack();
    const back = await tab.waitText(words(`${ui.main} (${short(ui.main)}) → feature (${short(ui.feature)})`));
    t.match(back, words('rule 2: adyen 50% → 60%'), 'Back: the comparison before the swap');
    t.equal(await page.getByLabel('Base reference').inputValue(), ui.main, 'the form shows it too');
    t.equal(new URL(page.url()).searchParams.get('head'), 'feature');
    await page.goForward();
    t.match(await tab.waitText(words(`feature (${short(ui.feature)}) → ${ui.main}`)), words('rule 2: adyen 60% → 50%'), 'Forward: the swapped one again');
  });

  const review = await ui.git.repo.commit(
    'review',
    {
      'default.features.yml': readFileSync(join(UI_FIXTURES, 'review', 'default.features.yml'), 'utf8'),
      '.vexil/policy.yml': readFileSync(join(UI_FIXTURES, 'review', 'policy.yml'), 'utf8'),
    },
    { parent: ui.main, message: 'Review: Spain in the EU segment, dark mode to 60%, express pay' },
  );
  t.equal((await ui.post('/meta/refresh', {})).status, 200, 'vexil sees branch review');
  /** The bare repository vexil serves from, for `vexil diff --repo`. */
  const repoDir = join(ui.git.repo.root, ui.git.repo.name);

  await ui.test(t, 'review: flags through a changed segment, summaries of added and removed flags, guards, Copy as Markdown and Copy link', async (t, tab) => {
    const { page } = tab;
    await ui.browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });
    await tab.open('/ui/diff?base=main&head=review&impact=10000');
    const text = await tab.waitText(/Impact:/);
    t.match(text, words(`main (${short(ui.main)}) → review (${short(review)})`));
    t.match(text, words('1 flag added, 1 flag removed, 1 flag changed, 1 segment changed.'));

    // The segment's set change in words: values added and removed, no JSON, no operator code.
    const eu = await entry(page, 'eu').innerText();
    t.match(eu, words('constraint 2: country is one of: added es; removed it'));
    t.notMatch(text, /\\|isoneof|\[\\?"/, 'no escaped JSON, no operator code');

    // payment-provider reads eu: listed although the sample (no country in its context) shows no change.
    const pay = await entry(page, 'payment-provider').innerText();
    t.match(pay, /payment-provider\s+via a segment/);
    t.match(pay, words('reads a changed segment · no change for 10,000 sampled entities'));
    t.match(pay, words('Unchanged itself, it reads a changed segment: no change for 10,000 sampled entities.'));

    // Added and removed flags: their summary, read from their side.
    const express = await entry(page, 'express-pay').innerText();
    t.match(express, words('New flag (only in head).'));
    await tab.waitText(/Rollout 2: 30% of entities → true/);
    const expressNow = await entry(page, 'express-pay').innerText();
    t.match(expressNow, words('Boolean flag, disabled, 2 rollouts.'));
    t.match(expressNow, words('Rollout 1: entities in segment beta → true'));
    t.match(expressNow, words('Everyone else → false'));
    await tab.waitText(/Removed flag \(only in base\)\.\s*Boolean flag, disabled, 0 rollouts\./);

    // The head's guards beside the flags they concern.
    t.match(text, words('Guards of .vexil/policy.yml (from the head): failed, 2 errors.'));
    const dark = await entry(page, 'dark-mode').innerText();
    t.match(dark, /2 changes · impact \d+\.\d% · 1 guard failed/, 'disabled: entities move true → false');
    t.match(dark, words('disabled (was enabled)'));
    t.match(dark, /error guard\.max-rollout-change: .*25% → 60%, a move of 35 percentage points/);
    t.match(await entry(page, 'new-checkout').innerText(), /error guard\.protected: /);
    t.notMatch(pay, /guard/, 'no finding about payment-provider');
    await tab.checkpoint(t, 'ui-diff-review');

    // Copy as Markdown: exactly what `vexil diff --format markdown` prints for the same refs and impact.
    await page.getByRole('button', { name: 'Copy as Markdown' }).click();
    await tab.waitText(/Markdown copied\./);
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    const cli = await runCli(['diff', 'main', 'review', '--repo', repoDir, '--format', 'markdown', '--impact', '10000']);
    t.equal(cli.code, 0, cli.stderr);
    t.equal(copied, cli.stdout, 'the clipboard holds the CLI\'s Markdown');
    t.match(copied, /payment-provider: no change for 10,000 entities/);

    await page.getByRole('button', { name: 'Copy link' }).click();
    await tab.waitText(/Link copied\./);
    t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), page.url(), 'the link is the page\'s address');

    // The keyboard reaches every control in reading order: the copy buttons, the summary's link, the filter, each summary.
    await page.getByRole('button', { name: 'Copy as Markdown' }).focus();
    const focused: string[] = [];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate<string>('(document.activeElement.tagName + " " + (document.activeElement.textContent || document.activeElement.value || "")).replace(/\\s+/g, " ").trim().slice(0, 40)'));
    }
    t.same(
      focused.map((f) => f.replace(/^(\w+ \S+(?: \S+)?).*$/, '$1')),
      ['BUTTON Copy link', 'A default', 'INPUT all', 'SUMMARY Namespace default', 'SUMMARY flag dark-mode', 'A Open the', 'SUMMARY flag express-pay'],
      `Tab order: ${focused.join(' | ')}`,
    );

    // Without the impact preview the copy matches `--impact 0` (the guards take no sample here).
    await tab.open('/ui/diff?base=main&head=review&impact=0');
    await tab.waitText(/1 segment changed\./);
    await page.getByRole('button', { name: 'Copy as Markdown' }).click();
    await tab.waitText(/Markdown copied\./);
    const noImpact = await runCli(['diff', 'main', 'review', '--repo', repoDir, '--format', 'markdown', '--impact', '0']);
    t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), noImpact.stdout, 'impact 0: the CLI with --impact 0');
  });

  await ui.test(t, 'review at 375 px: no sideways scroll; the dark theme', async (t, tab) => {
    const { page } = tab;
    await page.setViewportSize({ width: 375, height: 740 });
    await tab.open('/ui/diff?base=main&head=review&impact=10000');
    await tab.waitText(/Rollout 2: 30% of entities → true/);
    const width = await tab.scrollWidth();
    t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
    await tab.checkpoint(t, 'ui-diff-review-375');
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.checkpoint(t, 'ui-diff-review-375-dark');
    await page.setViewportSize({ width: 1280, height: 800 });
    await tab.checkpoint(t, 'ui-diff-review-dark');
  });

  // 120 flags added: more than the page opens at once, and more than it draws at once (100).
  const bulkFlags = Array.from({ length: 120 }, (_, i) => `  - key: bulk-${String(i).padStart(3, '0')}\n    name: Bulk ${i}\n    type: BOOLEAN_FLAG_TYPE\n    enabled: ${i % 2 === 0}\n`).join('');
  await ui.git.repo.commit(
    'bulk',
    { 'bulk.features.yml': `version: "1.4"\nnamespace: bulk\nflags:\n${bulkFlags}` },
    { parent: ui.feature, message: 'A hundred and twenty flags in namespace bulk' },
  );
  t.equal((await ui.post('/meta/refresh', {})).status, 200, 'vexil sees branch bulk');

  await ui.test(t, 'a large comparison starts collapsed; the filter and its counts', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/diff?base=main&head=bulk&impact=10000');
    const text = await tab.waitText(/120 flags added, 2 flags changed, 1 namespace added\./);
    t.match(text, words('All (122) Changed (2) Added (120) Removed (0) Impact > 0 (2)'));
    t.equal(await page.locator('details.diff-entry[open]').count(), 0, 'every entry collapsed');
    t.match(text, words('Namespace bulk added 120 entries'));
    t.notMatch(text, /Bulk 7|bulk-007/, 'a collapsed namespace of several draws none of its entries');
    t.match(text, /flag\s+payment-provider\s+changed\s+variant\s+3 changes · impact 10\.0%/, 'a collapsed entry still says what it is');
    await tab.checkpoint(t, 'ui-diff-collapsed');

    await page.getByLabel('Impact > 0 (2)').check();
    const impact = await tab.waitText(/2 of 2 entries shown/);
    t.notMatch(impact, /Namespace bulk/, 'a namespace with nothing to show is left out');
    await page.getByLabel('Added (120)').check();
    const added = await tab.waitText(/120 of 120 entries shown/);
    t.notMatch(added, /Namespace default/);
    await page.locator('summary', { hasText: 'Namespace bulk' }).click();
    await tab.waitText(/bulk-099/);
    t.notMatch(await tab.text(), /bulk-100/, 'the first 100 entries drawn');
    await page.getByRole('button', { name: 'Show 20 more of 20' }).click();
    await tab.waitText(/bulk-119/);
    await entry(page, 'bulk-007').locator('summary').click();
    t.match(await tab.waitText(/Boolean flag, disabled, 0 rollouts\./), /Everyone else → false/, 'opened: the added flag\'s summary');
    await tab.checkpoint(t, 'ui-diff-filtered');
  });
});
