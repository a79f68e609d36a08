/**
 * The history page in headless Chromium against a real `vexil serve` (history kept in its SQLite
 * data store) on a real Git repository: before any change, main's one served revision; then a
 * commit with a YAML error and a valid commit are pushed to main over HTTP (a clone, a commit,
 * `git push`) and vexil polls after each: the page shows both served revisions and the rejection
 * in its place (its problem at `file:line:column`, what was kept serving), as `/meta/history`
 * says; the newest entry's link opens the diff of the revision served before it with it; paging
 * one entry at a time (the diff base read from the next page); the status page's link; the
 * reference switcher; an empty history; a bad page token in words; 375 px and the dark theme.
 * Then the history kept in a real PostgreSQL that is stopped: the page says the history store is
 * out of reach (and the flags are still served), and shows the history again once it is back.
 * Every page: no console error, axe-core clean, a screenshot.
 */
import tap from 'tap';
import { testsNeeding } from '../support/requirements.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);
const short = (id: string) => id.slice(0, 7);
/** An entry's heading as innerText reads it: status, short id, the full id for screen readers, the message's first line. */
const heading = (status: string, id: string, message: string) => words(`${status} ${short(id)} (full id ${id}) ${message}`);

interface Entry {
  revision: string;
  status: 'served' | 'rejected';
  servedFrom: string | null;
  servedUntil: string | null;
  replacedBy: string | null;
}

t.test('the history page of a reference before and after a bad and a good push', async (t) => {
  const ui = await startUi(t);
  const entryTexts = (tab: { page: import('playwright-core').Page }) => tab.page.locator('#history-entries > li').allInnerTexts();

  await ui.test(t, 'before any change: the one revision served, serving now, nothing to compare with', async (t, tab) => {
    await tab.open('/ui/history');
    const text = await tab.waitText(/1 entry: 1 served, 0 rejected\./);
    t.match(text, /History of main/, 'the default reference, named');
    const [only] = await entryTexts(tab);
    t.match(only, heading('served', ui.main, 'Checkout flags'));
    t.match(only, /Author\s+Ada Lovelace/);
    t.match(only, /Served\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(.+\) → serving now/);
    t.match(only, /Replaced by\s+—/);
    t.match(only, /The first revision in the history kept: nothing served before it to compare with\./);
    t.equal(await tab.page.locator('#history-entries code', { hasText: short(ui.main) }).first().getAttribute('title'), ui.main, 'the full id on hover');
  });

  const bad = await ui.push('main', 'broken', 'Break the YAML of dark-mode');
  t.equal((await ui.post('/meta/refresh', {})).status, 200);
  const good = await ui.push('main', 'feature', 'Try Adyen on 60% of everyone, on main\n\nThe body of the message.');
  t.equal((await ui.post('/meta/refresh', {})).status, 200);
  const api = (await (await fetch(`${ui.url}/meta/history?reference=main`)).json()) as { entries: Entry[] };
  t.same(
    api.entries.map((e) => [e.status, e.revision, e.replacedBy]),
    [
      ['served', good, null],
      ['rejected', bad, null],
      ['served', ui.main, good],
    ],
    'the API: two served revisions and the rejection between them',
  );

  await ui.test(t, 'served, rejected in place with its problem, served; the diff link', async (t, tab) => {
    await tab.open('/ui/history?ref=main');
    await tab.waitText(/3 entries: 2 served, 1 rejected\./);
    await tab.waitText(/Diff with the revision served before/);
    const [newest, rejection, oldest] = await entryTexts(tab);
    t.match(newest, heading('served', good, 'Try Adyen on 60% of everyone, on main'), 'the first line of the message');
    t.notMatch(newest, /The body of the message/);
    t.match(newest, /Author\s+Grace Hopper/);
    t.match(newest, /Served\s+.+ UTC \(.+\) → serving now/);
    t.match(newest, words(`Diff with the revision served before (${short(ui.main)} → ${short(good)})`));

    t.match(rejection, heading('rejected', bad, 'Break the YAML of dark-mode'));
    t.match(rejection, /Rejected at\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    t.match(rejection, words(`Kept serving ${short(ui.main)}`));
    t.match(rejection, /1 problem\s/);
    t.match(rejection, /default\.features\.yml:30:14\s+error\s+yaml\.syntax\s+Nested mappings are not allowed in compact mappings/);
    t.notMatch(rejection, /Diff with/, 'a rejected revision cannot be built: no diff link');

    const servedFrom = api.entries[2]!.servedFrom!.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    const servedUntil = api.entries[2]!.servedUntil!.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    t.match(oldest, heading('served', ui.main, 'Checkout flags'));
    t.match(oldest, new RegExp(`Served\\s+${servedFrom} \\(.+\\) → ${servedUntil} \\(.+\\) \\(for .+\\)`), 'from → until, the times of the API');
    t.match(oldest, words(`Replaced by ${short(good)}`));

    const link = tab.page.getByRole('link', { name: 'Diff with the revision served before' });
    const href = new URL((await link.getAttribute('href'))!, ui.url);
    t.equal(href.pathname, '/ui/diff');
    t.same([href.searchParams.get('base'), href.searchParams.get('head'), href.searchParams.get('ref')], [ui.main, good, 'main'], 'base: the revision served before; head: this one');
    await tab.checkpoint(t, 'ui-history');

    await link.click();
    const diff = await tab.waitText(/2 flags changed\./);
    t.match(diff, words(`${ui.main} (${short(ui.main)}) → ${good} (${short(good)})`), 'the diff page compares the two served revisions');
  });

  await ui.test(t, 'one entry a page: older entries, the diff base from the next page, back to the newest', async (t, tab) => {
    await tab.open('/ui/history?ref=main&limit=1');
    const first = await tab.waitText(/1 entry on this page: 1 served, 0 rejected\. Older entries follow on the next page\./);
    t.match(first, words(`served ${short(good)}`));
    await tab.waitText(words(`Diff with the revision served before (${short(ui.main)} → ${short(good)})`));
    await tab.page.getByRole('link', { name: 'Older entries' }).click();
    const second = await tab.waitText(words(`Kept serving ${short(ui.main)}`));
    t.match(second, heading('rejected', bad, 'Break the YAML of dark-mode'), 'what was kept serving, read from the next page');
    t.match(new URL(tab.page.url()).searchParams.get('pageToken') ?? '', /./, 'the page token is in the address');
    await tab.page.getByRole('link', { name: 'Older entries' }).click();
    const third = await tab.waitText(heading('served', ui.main, 'Checkout flags'));
    t.match(third, /1 entry: 1 served, 0 rejected\./, 'the last page');
    t.match(third, /The first revision in the history kept/);
    t.equal(await tab.page.getByRole('link', { name: 'Older entries' }).count(), 0, 'nothing older');
    await tab.page.getByRole('link', { name: 'Newest entries' }).click();
    await tab.waitText(words(`served ${short(good)}`));
    t.equal(new URL(tab.page.url()).search, '?ref=main&limit=1');
  });

  await ui.test(t, 'the status page links to each reference’s history; the switcher changes the reference', async (t, tab) => {
    await tab.open('/ui/status');
    await tab.waitText(/\d+ references/);
    const link = tab.page.locator('#ref-main').getByRole('link', { name: 'History of main' });
    t.equal(await link.getAttribute('href'), '/ui/history?ref=main');
    t.equal(await tab.page.locator('#ref-feature').getByRole('link', { name: 'History of feature' }).getAttribute('href'), '/ui/history?ref=feature');
    await link.click();
    await tab.waitText(/3 entries: 2 served, 1 rejected\./);
    t.equal(await tab.page.title(), 'History of main · vexil');

    await tab.page.getByLabel('Reference', { exact: true }).selectOption('feature');
    const feature = await tab.waitText(/History of feature[\s\S]*1 entry: 1 served, 0 rejected\./);
    t.match(feature, heading('served', ui.feature, 'Try Adyen on 60% of everyone'));
    t.equal(new URL(tab.page.url()).search, '?ref=feature');
  });

  await ui.test(t, 'an empty history, a commit id, a bad page token: in words', async (t, tab) => {
    await tab.open('/ui/history?ref=nope');
    t.match(await tab.waitText(/No revision of nope is in the history\./), /vexil records a reference from the first revision it serves or rejects/);
    await tab.open(`/ui/history?ref=${ui.feature}`);
    await tab.waitText(words(`${ui.feature} is a commit id: it never changes, so vexil keeps no history for it.`));
    await tab.checkpoint(t, 'ui-history-empty');

    tab.allowError(/status of 400/);
    await tab.open('/ui/history?ref=main&pageToken=not-a-token');
    const text = await tab.waitText(/This address cannot be read/);
    t.match(text, /The server refused the query: pageToken .+ start again from the newest entries\./);
    await tab.page.getByRole('link', { name: 'Show the newest entries' }).click();
    await tab.waitText(/3 entries: 2 served, 1 rejected\./);
  });

  await ui.test(t, 'at 375 px wide the history does not scroll sideways; the dark theme', async (t, tab) => {
    const { page } = tab;
    await page.setViewportSize({ width: 375, height: 1100 });
    await tab.open('/ui/history?ref=main');
    await tab.waitText(/Diff with the revision served before/);
    const width = await tab.scrollWidth();
    t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
    await tab.checkpoint(t, 'ui-history-375');
    await page.setViewportSize({ width: 800, height: 1100 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.open('/ui/history?ref=main');
    await tab.waitText(/Diff with the revision served before/);
    await tab.checkpoint(t, 'ui-history-dark');
  });
});

testsNeeding(t, 'postgresql', postgresUnavailableReason()).test('the history store out of reach, said in words', async (t) => {
  const pg = await startPostgres();
  t.teardown(() => pg.close());
  const url = JSON.stringify(pg.url);
  const ui = await startUi(t, {
    authentication: `authentication: { storage: { type: postgres, postgres: { url: ${url}, connect_timeout: 2s, query_timeout: 2s, pool_wait_timeout: 2s } } }`,
  });

  await ui.test(t, 'PostgreSQL stopped, then back', async (t, tab) => {
    await tab.open('/ui/history?ref=main');
    t.match(await tab.waitText(/1 entry: 1 served, 0 rejected\./), heading('served', ui.main, 'Checkout flags'), 'kept in PostgreSQL');
    await pg.stop();
    tab.allowError(/status of 503/);
    await tab.open('/ui/history?ref=main');
    const text = await tab.waitText(/History store unavailable/);
    t.match(text, words('The server answered "the history store cannot be read now": the database that keeps the history'));
    t.match(text, /Flags are still served; only the record of what was served when cannot be read\./);
    await tab.checkpoint(t, 'ui-history-unavailable');
    const flags = await fetch(`${ui.url}/api/v1/namespaces/default/flags?reference=main`);
    t.equal(flags.status, 200, 'and they are');
    await flags.arrayBuffer();
    await pg.start();
    await tab.open('/ui/history?ref=main');
    await tab.waitText(/1 entry: 1 served, 0 rejected\./);
  });
});
