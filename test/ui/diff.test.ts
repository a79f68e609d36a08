/**
 * The diff page in headless Chromium against a real `vexil serve` on a real Git repository: base
 * main, head feature (the "everyone" rollout of payment-provider moves 50/50 → 40/60, its name
 * changes, new-checkout is enabled). The page shows each change in words and the impact preview,
 * with the same figures as `GET /api/v1/diff` for the same comparison; its address can be shared
 * (opening it shows the same comparison); a commit id works as base.
 */
import tap from 'tap';
import { startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);

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
    const payment = await page.locator('article', { has: page.locator('h4', { hasText: 'payment-provider' }) }).innerText();
    t.match(payment, /payment-provider\s+changed\s+variant/);
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

    const checkout = await page.locator('article', { has: page.locator('h4', { hasText: 'new-checkout' }) }).innerText();
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
});
