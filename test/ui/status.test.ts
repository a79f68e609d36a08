/**
 * The status page in headless Chromium against a real `vexil serve` on a real Git repository that
 * vexil polls once an hour: every reference with its state, revision and commit time; a good
 * commit pushed to `feature` (a clone, a commit, `git push` over HTTP) is not shown until "Check
 * now" asks the server to look (`POST /meta/refresh`), then is, with when it looked and what
 * changed; a commit with a YAML error pushed to main is rejected and main listed first as "older
 * revision served", after a branch that never had a valid state ("nothing served"), with its
 * problem at `file:line:column` and the offending line. At 375 px in the dark theme nothing
 * scrolls sideways; the keyboard reaches every control. With authentication required, a refused
 * check is said in words and the page stays.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { UI_FIXTURES, startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);
const short = (id: string) => id.slice(0, 7);

t.test('the status page: problems first, and Check now', async (t) => {
  const ui = await startUi(t);

  await ui.test(t, 'every reference with its state, revision and commit time; no reference switcher', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/status');
    const text = await tab.waitText(/2 references, no problems\./);
    t.match(text, new RegExp(`main\\s+default\\s+ok\\s+${short(ui.main)}\\s+committed \\S+.* ago`));
    t.match(text, new RegExp(`feature\\s+ok\\s+${short(ui.feature)}`));
    t.match(text, words(`${short(ui.main)} is served, the newest commit the server has seen.`));
    t.match(text, /Check now\s+Asks the server to look at the source now instead of waiting for its next poll\./);
    t.equal(await page.locator('#ref-select').count(), 0, 'no reference switcher: the page lists every reference');
    await page.getByText('Revision, load and check times of main').click();
    const main = await tab.waitText(/Author/, '#ref-main');
    t.match(main, new RegExp(`Revision\\s+${short(ui.main)}`));
    t.match(main, /Author\s+Ada Lovelace/);
    t.match(main, /Message\s+Checkout flags/);
    t.match(main, /Committed\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\S+.* ago\)/);
    await tab.checkpoint(t, 'ui-status');
  });

  await ui.test(t, 'a good push to feature appears on "Check now", not before', async (t, tab) => {
    const { page } = tab;
    const good = await ui.push('feature', 'main', 'Back to the checkout flags of main');
    await tab.open('/ui/status');
    await tab.waitText(/2 references, no problems\./);
    t.match(await tab.text('#status-references'), new RegExp(`feature\\s+ok\\s+${short(ui.feature)}`), 'the poll (once an hour) has not seen the push');
    await page.getByRole('button', { name: 'Check now' }).click();
    const result = await tab.waitText(/Checked at/, '#check-result');
    t.match(result, new RegExp(`^Checked at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC: feature: now serves ${short(good)} \\(was ${short(ui.feature)}\\)\\.$`));
    t.match(await tab.waitText(new RegExp(short(good)), '#status-references'), new RegExp(`feature\\s+ok\\s+${short(good)}`), 'the list shows the new commit');
    const api = (await (await fetch(`${ui.url}/meta/snapshots`)).json()) as { references: { reference: string; revision: { id: string } }[] };
    t.equal(api.references.find((r) => r.reference === 'feature')?.revision.id, good, 'as the API says');

    await page.getByRole('button', { name: 'Check now' }).click();
    t.match(await tab.waitText(/no change/, '#check-result'), /: no change, every reference serves what it served before\.$/, 'a second look finds nothing new');
  });

  await ui.test(t, 'a bad push to main and a branch never valid: problems first, told apart', async (t, tab) => {
    const { page } = tab;
    const bad = await ui.push('main', 'broken', 'Break the YAML of dark-mode');
    const broken = readFileSync(join(UI_FIXTURES, 'broken', 'default.features.yml'), 'utf8');
    const never = await ui.git.repo.commit('never-valid', { 'default.features.yml': broken }, { parent: ui.main });
    await tab.open('/ui/status');
    await tab.waitText(/2 references, no problems\./);
    await page.getByRole('button', { name: 'Check now' }).click();
    t.match(await tab.waitText(/rejected/, '#check-result'), words(`main: ${short(bad)} was rejected; ${short(ui.main)} is still served.`));
    await tab.waitText(/2 references: 1 serves an older revision \(the newest was rejected\)\./);

    // A branch the server has not built yet (it has listed it on that look): opening a page of it builds it, and fails.
    tab.allowError(/status of 400/);
    await tab.open('/ui/namespaces/default/flags?ref=never-valid');
    await tab.waitText(/has no valid state/);
    await tab.open('/ui/status');
    const text = await tab.waitText(/3 references: 1 serves nothing, 1 serves an older revision \(the newest was rejected\)\./);
    const rows = await page.locator('#status-references tbody th').allInnerTexts();
    t.same(
      rows.map((r) => r.trim().split(/\s+/)[0]),
      ['never-valid', 'main', 'feature'],
      'problems first: nothing served, then an older revision served, then the rest',
    );
    t.match(text, /never-valid\s+nothing served\s+nothing/);
    t.match(text, new RegExp(`main\\s+default\\s+older revision served\\s+${short(ui.main)}`));

    const never_ = await tab.text('#ref-never-valid');
    t.match(never_, words(`Nothing is served: its newest commit ${short(never)} was rejected and no earlier commit was ever valid.`));
    const main = await tab.text('#ref-main');
    t.match(main, words(`An older revision is still served: ${short(ui.main)}, because the newest commit ${short(bad)} was rejected.`));
    t.match(main, new RegExp(`Rejected revision\\s+The revision below was rejected; the server keeps serving ${short(ui.main)}\\.`));
    t.match(main, new RegExp(`Revision\\s+${short(bad)}`));
    t.match(main, /Author\s+Grace Hopper/);
    t.match(main, /Message\s+Break the YAML of dark-mode/);
    t.match(main, /1 problem\s/);
    t.match(main, /default\.features\.yml:30:14\s+error\s+yaml\.syntax\s+Nested mappings are not allowed in compact mappings/);
    t.match(main, />\s*30 │ {5}enabled: true: false\n\s+│ {14}\^/, 'the offending line, with a caret under column 14');
    t.match(main, /29 │ {5}type: BOOLEAN_FLAG_TYPE/, 'and the lines around it');
    await tab.checkpoint(t, 'ui-status-rejected');

    // Other pages' switcher says it in the same words.
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/dark-mode\s+Dark mode\s+The dark theme of the storefront\s+True\s/);
    t.match(await page.getByLabel('Reference', { exact: true }).locator('option', { hasText: 'main' }).innerText(), /older revision served/, 'the switcher says so too');
    t.match(await page.getByLabel('Reference', { exact: true }).locator('option', { hasText: 'never-valid' }).innerText(), /nothing served/);

    await page.setViewportSize({ width: 375, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.open('/ui/status');
    await tab.waitText(/1 serves an older revision/);
    t.ok((await tab.scrollWidth()) <= 375, 'no sideways scroll at 375 px');
    await tab.checkpoint(t, 'ui-status-375-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await ui.test(t, 'the keyboard reaches every control of the status page, in reading order', async (t, tab) => {
    const { page } = tab;
    const focused = () =>
      page.evaluate<string>("(document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent || '').trim()");
    await tab.open('/ui/status');
    await tab.waitText(/3 references/);
    const stops: string[] = [];
    const last = 'Revision, load and check times of feature';
    for (let i = 0; i < 40 && !stops.includes(last); i++) {
      await page.keyboard.press('Tab');
      stops.push(await focused());
    }
    t.same(
      stops,
      [
        'Skip to content', 'vexil', 'Flags', 'Console', 'Entity', 'Diff', 'Status', 'History',
        'check-now',
        'never-valid', 'main', 'feature',
        'Browse the flags of never-valid', 'History of never-valid', 'default.features.yml lines 28 to 32',
        'Browse the flags of main', 'History of main', 'default.features.yml lines 28 to 32',
        'Browse the flags of feature', 'History of feature', last,
      ],
      'the header (no switcher), Check now, each reference of the list, then each section with its links, the quoted lines (they scroll sideways on a phone) and details',
    );
    await page.keyboard.press('Enter');
    t.match(await tab.waitText(/Author/, '#ref-feature'), /Author\s+Grace Hopper/, 'the details open from the keyboard');
  });
});

t.test('with authentication required: Check now needs a valid credential, and says so when refused', async (t) => {
  const TOKEN = 'ui-status-bootstrap-token';
  const ui = await startUi(t, {
    authentication: ['authentication:', '  required: true', '  methods:', '    token:', '      enabled: true', `      bootstrap: { token: ${TOKEN} }`].join('\n'),
  });

  await ui.test(t, 'signed in: Check now looks; once the token is expired: refused in words, the page stays', async (t, tab) => {
    const { page } = tab;
    tab.allowError(/status of 401/);
    const created = await ui.post('/auth/v1/method/token', { name: 'ui-status-on-call' }, TOKEN);
    t.equal(created.status, 200);
    const token: string = created.body.clientToken;
    await tab.open('/ui/login?next=%2Fui%2Fstatus');
    await page.getByLabel('Client token').fill(token);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await tab.waitText(/2 references, no problems\./);
    await page.getByRole('button', { name: 'Check now' }).click();
    t.match(await tab.waitText(/Checked at/, '#check-result'), /: no change, every reference serves what it served before\.$/, 'the signed-in token may ask');

    const expired = await fetch(`${ui.url}/auth/v1/self/expire`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    t.equal(expired.status, 200, 'the token is expired on the server');
    await page.getByRole('button', { name: 'Check now' }).click();
    const refused = await tab.waitText(/refused/, '#check-result');
    t.match(refused, words('The server refused to look: your sign-in has expired or the token was revoked. Sign in again to check now. Sign in'));
    t.equal(new URL(page.url()).pathname, '/ui/status', 'the page stays, with its list');
    t.equal(await page.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href'), '/ui/login?next=%2Fui%2Fstatus');
    await tab.checkpoint(t, 'ui-status-check-refused');
  });
});
