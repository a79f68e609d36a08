/**
 * The status page in headless Chromium against a real `vexil serve` on a real Git repository:
 * every reference with its revision, author and message; then a commit with a YAML syntax error is
 * pushed to main (a clone, a commit, `git push` over HTTP), vexil polls (POST /meta/refresh), and
 * the page shows the rejected revision (id, author, message), its problem located at
 * `file:line:column` with the offending line, while main keeps serving its last good revision.
 */
import tap from 'tap';
import { startUi, uiTests } from '../support/ui-harness.js';

const t = uiTests(tap);

t.test('the status page before and after a bad push', async (t) => {
  const ui = await startUi(t);
  const short = (id: string) => id.slice(0, 7);

  await ui.test(t, 'every reference with its revision, author and message', async (t, tab) => {
    await tab.open('/ui/status');
    const text = await tab.waitText(/2 references, none with a rejected change\./);
    t.match(text, new RegExp(`main\\s+default\\s+${short(ui.main)}\\s+.+\\s+ok`));
    t.match(text, new RegExp(`feature\\s+${short(ui.feature)}\\s+.+\\s+ok`));
    const main = await tab.text('#ref-main');
    t.match(main, new RegExp(`Revision\\s+${short(ui.main)}`));
    t.match(main, /Author\s+Ada Lovelace/);
    t.match(main, /Message\s+Checkout flags/);
    t.match(await tab.text('#ref-feature'), /Message\s+Try Adyen on 60% of everyone/);
    await tab.checkpoint(t, 'ui-status');
  });

  await ui.test(t, 'a commit with a YAML error pushed to main: the rejected revision, its file:line:column and line', async (t, tab) => {
    const bad = await ui.push('main', 'broken', 'Break the YAML of dark-mode');
    const refresh = await ui.post('/meta/refresh', {});
    t.equal(refresh.status, 200);
    const api = refresh.body.references.find((r: { reference: string }) => r.reference === 'main');
    t.equal(api.lastRejected?.revision.id, bad, 'the API reports the bad commit as rejected');
    t.equal(api.revision.id, ui.main, 'and keeps serving the last good one');

    await tab.open('/ui/status');
    await tab.waitText(/2 references, 1 with a rejected change\./);
    const text = await tab.text();
    t.match(text, new RegExp(`main\\s+default\\s+${short(ui.main)}\\s+.+\\s+rejected`));
    const main = await tab.text('#ref-main');
    t.match(main, new RegExp(`Rejected revision\\s+The revision below was rejected; the server keeps serving ${short(ui.main)}\\.`));
    t.match(main, new RegExp(`Revision\\s+${short(bad)}`));
    t.match(main, /Author\s+Grace Hopper/);
    t.match(main, /Message\s+Break the YAML of dark-mode/);
    t.match(main, /1 problem\s/);
    t.match(main, /default\.features\.yml:30:14\s+error\s+yaml\.syntax\s+Nested mappings are not allowed in compact mappings/);
    t.match(main, />\s*30 │ {5}enabled: true: false\n\s+│ {14}\^/, 'the offending line, with a caret under column 14');
    t.match(main, /29 │ {5}type: BOOLEAN_FLAG_TYPE/, 'and the lines around it');
    t.match(await tab.page.getByLabel('Reference', { exact: true }).locator('option', { hasText: 'main' }).innerText(), /rejected change/, 'the switcher says so too');
    await tab.checkpoint(t, 'ui-status-rejected');

    // main still serves its last good revision.
    await tab.open('/ui/namespaces/default/flags');
    await tab.waitText(/dark-mode\s+Dark mode\s+The dark theme of the storefront\s+True\s/);
  });
});
