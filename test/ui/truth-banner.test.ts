/**
 * The truth banner in headless Chromium against a real `vexil serve` on a real Git repository: a
 * commit with a YAML error is pushed to `feature` (clone, commit, `git push` over HTTP) and vexil
 * polls; the flags page, a flag page and the diff main → feature then say at the top that feature's
 * newest commit was rejected (served and rejected commit, author, first problem, a link to its
 * Status entry), the diff on the head side only. A branch that never had a valid state gets the
 * "has no valid state" error in words with a link to Status, not a bare `Error 400`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { UI_FIXTURES, startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);

t.test('a reference whose latest push was rejected is never shown as the branch', async (t) => {
  const ui = await startUi(t);
  const short = (id: string) => id.slice(0, 7);
  const bad = await ui.push('feature', 'broken', 'Break the YAML of dark-mode');
  const refresh = await ui.post('/meta/refresh', {});
  t.equal(refresh.status, 200);
  const api = refresh.body.references.find((r: { reference: string }) => r.reference === 'feature');
  t.equal(api.lastRejected?.revision.id, bad, 'the API reports the pushed commit as rejected');
  t.equal(api.revision.id, ui.feature, 'and keeps serving the last good one');
  const said = [
    words(`feature: newest commit rejected`),
    words(`The newest commit of feature, ${short(bad)} by Grace Hopper <grace@example.com>, was rejected; this page shows ${short(ui.feature)}, its last valid commit.`),
    words('First problem: default.features.yml:30:14 Nested mappings are not allowed in compact mappings'),
    words('See feature on the Status page'),
  ];

  await ui.test(t, 'the flags page and a flag page: the banner at the top, then the page', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/namespaces/default/flags?ref=feature');
    await tab.waitText(/Showing 1–\d+ of \d+ flags/);
    const banner = page.getByRole('status').filter({ hasText: 'newest commit rejected' });
    const text = await banner.innerText();
    for (const s of said) t.match(text, s);
    t.equal(await page.locator('main > :first-child').getAttribute('class'), 'truth-banner rejected', 'first thing in the page');
    await tab.checkpoint(t, 'ui-banner-flags');

    await tab.open('/ui/namespaces/default/flags/dark-mode?ref=feature');
    const flag = await tab.waitText(/newest commit rejected[\s\S]*dark-mode/);
    for (const s of said) t.match(flag, s);
    await tab.checkpoint(t, 'ui-banner-flag');

    await page.setViewportSize({ width: 375, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.open('/ui/namespaces/default/flags/dark-mode?ref=feature');
    await tab.waitText(/newest commit rejected[\s\S]*dark-mode/);
    t.ok((await tab.scrollWidth()) <= 375, 'no sideways scroll at 375 px');
    await tab.checkpoint(t, 'ui-banner-flag-375-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });

    await tab.open('/ui/namespaces/default/flags?ref=main');
    await tab.waitText(/Showing 1–\d+ of \d+ flags/);
    t.equal(await page.locator('.truth-banner').count(), 0, 'main is served as it is: no banner');

    await tab.open('/ui/namespaces/default/flags?ref=feature');
    await page.getByRole('link', { name: 'See feature on the Status page' }).click();
    await page.waitForURL(/\/ui\/status#ref-feature$/);
    t.match(await tab.waitText(/1 serves an older revision/), words(`The revision below was rejected; the server keeps serving ${short(ui.feature)}.`), 'the link leads to the Status entry');
  });

  await ui.test(t, 'the diff main → feature: the banner on the head side only', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/diff?base=main&head=feature&impact=0');
    const text = await tab.waitText(/flags? changed/);
    t.match(text, words('Head: feature: newest commit rejected'));
    for (const s of said.slice(1)) t.match(text, s);
    t.match(text, words(`main (${short(ui.main)}) → feature (${short(ui.feature)})`), 'the comparison is of the served commit, as the banner says');
    t.equal(await page.locator('.truth-banner').count(), 1, 'main (base) is served as it is');
    await tab.checkpoint(t, 'ui-banner-diff');

    await tab.open('/ui/diff?base=feature&head=main&impact=0');
    t.match(await tab.waitText(/flags? changed/), words('Base: feature: newest commit rejected'), 'swapped: on the base side');
  });

  await ui.test(t, 'a branch never valid: "has no valid state" in words, with a link to Status', async (t, tab) => {
    const { page } = tab;
    const broken = readFileSync(join(UI_FIXTURES, 'broken', 'default.features.yml'), 'utf8');
    const never = await ui.git.repo.commit('never-valid', { 'default.features.yml': broken }, { parent: ui.main });
    tab.allowError(/status of 400/);
    await tab.open('/ui/namespaces/default/flags?ref=never-valid');
    const text = await tab.waitText(/has no valid state/);
    t.match(text, words('never-valid has no valid state: vexil rejected its commits and never served a valid one, so there is nothing to show.'));
    t.match(text, /default\.features\.yml:30:14/, 'the server\'s first problem is quoted');
    t.notMatch(text, /Error 400/, 'not a bare status code');
    // The server lists the branch once the page's request has tried to build it: the banner follows.
    const banner = page.getByRole('status').filter({ hasText: 'was never valid' });
    await banner.waitFor();
    const said = await banner.innerText();
    t.match(said, words('never-valid was never valid'));
    t.match(said, words(`never-valid has no valid state: its commit ${short(never)} by Ada Lovelace <ada@example.com> was rejected and no earlier commit was ever valid, so nothing is served.`));
    t.match(said, words('First problem: default.features.yml:30:14 Nested mappings are not allowed in compact mappings'));
    t.equal(await page.locator('main > :first-child').getAttribute('class'), 'truth-banner never-valid', 'the banner first, then the error box');
    await tab.checkpoint(t, 'ui-no-valid-state');
    await page.getByRole('link', { name: 'See why on the Status page' }).click();
    await page.waitForURL(/\/ui\/status#ref-never-valid$/);
    const status = await tab.waitText(/Rejected revision/, '#ref-never-valid');
    t.match(status, words('The revision below was rejected; nothing is served yet.'));
    t.match(status, words(`Revision ${short(never)}`));
    const top = await page.locator('#ref-never-valid').evaluate((e) => (e as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top);
    t.ok(top >= 0 && top < 100, `the page lands on the entry (its top at ${top} px)`);
  });

  await ui.test(t, 'a flag missing on the viewed reference: where it exists, linked', async (t, tab) => {
    const { page } = tab;
    tab.allowError(/status of 404/);
    const only = readFileSync(join(UI_FIXTURES, 'elsewhere', 'elsewhere.features.yml'), 'utf8');
    await ui.git.repo.commit('search/x', { 'elsewhere.features.yml': only }, { parent: ui.main, message: 'A new search, behind a flag' });
    t.equal((await ui.post('/meta/refresh', {})).status, 200, 'vexil lists the new branch');
    await tab.open('/ui/namespaces/elsewhere/flags/new-search?ref=search%2Fx');
    await tab.waitText(/boolean flag/);

    await tab.open('/ui/namespaces/elsewhere/flags/new-search');
    const text = await tab.waitText(/This flag exists on/);
    t.match(text, /Not found: /, 'the error box says it is not found here');
    t.match(text, words('This flag exists on: search/x'));
    await tab.checkpoint(t, 'ui-flag-elsewhere');
    await page.getByRole('link', { name: 'search/x', exact: true }).click();
    await page.waitForURL(/\/ui\/namespaces\/elsewhere\/flags\/new-search\?ref=search%2Fx$/);
    await tab.waitText(/boolean flag/);
    t.equal(await page.locator('#flag-elsewhere').count(), 0, 'found there: nothing more to say');

    await tab.open('/ui/namespaces/default/flags/no-such-flag');
    t.match(await tab.waitText(/This flag exists on none/), words('This flag exists on none of the references looked at: feature and 1 other reference.'));
  });

});
