/**
 * "What does this entity get" (/ui/entity) in headless Chromium against a real `vexil serve` on a
 * real Git repository: what the page shows for every flag of a namespace (key, type, what it serves,
 * the reason, the segments) equals what `POST /evaluate/v1/batch` answers when the test asks it with
 * Node's fetch for the same entity and context; the page sends one batch request; the keys the
 * segments read are ready rows; an empty entity id is said inline and nothing is sent; "Copy as curl"
 * run with the real `curl` gets the same JSON, and with authentication on it carries a placeholder,
 * never the token; each row links to its flag and to the console's trace; 375 px without a sideways
 * scroll, axe-core in both themes, and the keyboard reaches every control.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import tap, { type Test } from 'tap';
import { tabThroughMain } from '../support/tab-order.js';
import { startUi, uiTests, words, type Ui, type UiTab } from '../support/ui-harness.js';

const t = uiTests(tap);
const run = promisify(execFile);

const REASONS: Record<string, string> = {
  MATCH_EVALUATION_REASON: 'match',
  DEFAULT_EVALUATION_REASON: 'default',
  FLAG_DISABLED_EVALUATION_REASON: 'flag disabled',
  UNKNOWN_EVALUATION_REASON: 'unknown',
};

/** The rows the page shows: flag key, type, serves, reason, segments. */
async function shownRows(page: Page): Promise<string[][]> {
  const out: string[][] = [];
  for (const tr of await page.locator('#entity-results tbody tr').all()) {
    const key = (await tr.locator('th a').innerText()).trim();
    const cells = (await tr.locator('td').allInnerTexts()).map((c) => c.trim());
    out.push([key, ...cells.slice(0, 4)]);
  }
  return out;
}

/** The same rows from a `/evaluate/v1/batch` answer. */
function answerRows(body: { responses: any[] }): string[][] {
  return body.responses.map((item) => {
    if (item.type === 'VARIANT_EVALUATION_RESPONSE_TYPE') {
      const v = item.variantResponse;
      return [v.flagKey, 'variant', v.variantKey || '(no variant)', REASONS[v.reason]!, v.segmentKeys.join(', ') || 'none'];
    }
    const b = item.booleanResponse;
    return [b.flagKey, 'boolean', String(b.enabled), REASONS[b.reason]!, b.segmentKeys.join(', ') || 'none'];
  });
}

/** The batch for every flag of `namespace` (in the flag list's order), as the test builds it. */
async function batchFor(ui: Ui, namespace: string, entityId: string, context: Record<string, string>, token?: string) {
  const res = await fetch(`${ui.url}/api/v1/namespaces/${namespace}/flags?limit=0`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const flags = ((await res.json()) as { flags: Array<{ key: string }> }).flags;
  const body = { requests: flags.map((f) => ({ namespaceKey: namespace, flagKey: f.key, entityId, context })) };
  const answer = await ui.post('/evaluate/v1/batch', body, token);
  return { body, answer };
}

/** A batch answer without what differs between two requests (ids, durations, timestamps). */
function stable(body: any): unknown {
  return JSON.parse(JSON.stringify(body), (k, v) => (k === 'requestId' || k === 'requestDurationMillis' || k === 'timestamp' ? undefined : v));
}

/** Fills the value of the row holding `key` (a ready row the page offers). */
async function fillReady(page: Page, key: string, value: string): Promise<void> {
  const keys = await page.locator('.context-rows input[id^="context-key-"]').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
  const i = keys.indexOf(key);
  if (i < 0) throw new Error(`no row for ${key}: ${keys.join(', ')}`);
  await page.getByLabel(`Context value ${i + 1}`, { exact: true }).fill(value);
}

/** Counts the batch requests the page sends. */
function batchRequests(tab: UiTab): string[] {
  const seen: string[] = [];
  tab.page.on('request', (r) => {
    if (r.url().includes('/evaluate/v1/batch')) seen.push(r.postData() ?? '');
  });
  return seen;
}

/** Clicks "Copy as curl" and returns what the clipboard then holds. */
async function copyAsCurl(t: Test, tab: UiTab): Promise<string> {
  await tab.page.getByRole('button', { name: 'Copy as curl' }).click();
  await tab.waitText(/Copied: the curl command/, '#entity-copied');
  const text = await tab.page.evaluate<string>('navigator.clipboard.readText()');
  t.equal(text, (await tab.page.locator('#entity-curl').textContent())!, 'the command shown is the one copied');
  return text;
}

t.test('what does this entity get: every flag in one batch, as the API answers', async (t) => {
  const ui = await startUi(t);
  await ui.browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });

  await ui.test(t, 'ready rows, a required entity id, then the rows equal POST /evaluate/v1/batch', async (t, tab) => {
    const { page } = tab;
    const sent = batchRequests(tab);
    await tab.open('/ui/entity');
    let text = await tab.waitText(/read by segment beta/);
    t.match(text, /What does this entity get/);
    t.match(text, /Not evaluated yet\./);
    const keys = await page.locator('.context-rows input[id^="context-key-"]').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    t.same(keys, ['age', 'country', 'plan', 'region'], "the keys the default namespace's segments read, ready to fill");
    t.match(text, words('read by segment eu'));

    await page.getByRole('button', { name: 'Evaluate all flags' }).click();
    await tab.waitText(/Type an entity id, or generate one/, '#entity-error');
    t.equal(await page.evaluate<string>('document.activeElement.id'), 'entity-id');
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await tab.waitText(/Type an entity id/, '#entity-error');
    t.same(sent, [], 'no request without an entity id');

    await page.getByLabel('Entity id').fill('user-42');
    await fillReady(page, 'region', 'eu');
    await fillReady(page, 'plan', 'beta');
    await fillReady(page, 'age', '30');
    await page.getByRole('button', { name: 'Evaluate all flags' }).click();
    text = await tab.waitText(/3 flags of default for entity "user-42"/);
    t.equal(sent.length, 1, 'one request');
    const context = { age: '30', plan: 'beta', region: 'eu' };
    t.same(JSON.parse(sent[0]!).requests.map((r: { context: unknown }) => r.context), [context, context, context], 'the empty ready rows are not sent');

    const { answer } = await batchFor(ui, 'default', 'user-42', context);
    t.equal(answer.status, 200);
    t.same(await shownRows(page), answerRows(answer.body), 'the page shows what the batch answers');
    t.same(
      (await shownRows(page)).map((r) => [r[0], r[2], r[3]]),
      [['dark-mode', 'true', 'match'], ['new-checkout', 'false', 'default'], ['payment-provider', 'adyen', 'match']],
      "beta and adult: dark mode by its rollout; EU: adyen by rule 1; a boolean flag without rollouts: its enabled value, false",
    );
    t.match(text, /3 flags of default for entity "user-42": 2 by a rule or rollout, 1 by default, 0 disabled\./);
    const address = new URL(page.url()).searchParams;
    t.same([address.get('namespace'), address.get('entity'), JSON.parse(address.get('context')!)], ['default', 'user-42', context], 'the inputs are in the address');
    await tab.checkpoint(t, 'ui-entity');

    // The row's links: the flag page, and the console's trace for the same entity and context.
    await page.getByRole('link', { name: 'Trace of payment-provider in the console' }).click();
    text = await tab.waitText(/default\/payment-provider for entity "user-42": variant adyen/);
    t.match(text, words('Rule 1 decided: segment eu matched'));
    await page.goBack();
    await tab.waitText(/3 flags of default for entity "user-42"/);
    await page.getByRole('link', { name: 'dark-mode', exact: true }).click();
    await tab.waitText(/^Dark mode$/m);
    t.match(new URL(page.url()).pathname, '/ui/namespaces/default/flags/dark-mode');
  });

  await ui.test(t, 'a shared address evaluates at once; Copy as curl, run with curl, gets the same JSON', async (t, tab) => {
    const { page } = tab;
    // A quote, a dollar and a backtick: the command must carry them through the shell.
    const context = { region: "o'neil $(x) `y`", country: 'fr' };
    await tab.open(`/ui/entity?namespace=default&entity=${encodeURIComponent("ann o'hara")}&context=${encodeURIComponent(JSON.stringify(context))}`);
    await tab.waitText(/3 flags of default for entity "ann o'hara"/);
    const direct = await batchFor(ui, 'default', "ann o'hara", context);
    t.same(await shownRows(page), answerRows(direct.answer.body));

    const command = await copyAsCurl(t, tab);
    t.notMatch(command, /Authorization|Cookie/i, 'no authentication is on: no header');
    t.match(command, /^curl -sS -X POST '.*\/evaluate\/v1\/batch'/);
    const { stdout } = await run('/bin/sh', ['-c', command]);
    t.same(stable(JSON.parse(stdout)), stable(direct.answer.body), 'curl gets the same answer as the page');
    t.same(answerRows(JSON.parse(stdout)), await shownRows(page), 'and the same rows as shown');
  });

  await ui.test(t, 'the reference switcher re-evaluates on that branch', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/entity?namespace=default&entity=user-7');
    await tab.waitText(/3 flags of default for entity "user-7"/);
    await page.getByLabel('Reference', { exact: true }).selectOption('feature');
    await page.waitForURL(/[?&]ref=feature(&|$)/);
    const body = { reference: 'feature', requests: ['dark-mode', 'new-checkout', 'payment-provider'].map((flagKey) => ({ namespaceKey: 'default', flagKey, entityId: 'user-7', context: {} })) };
    const onFeature = await ui.post('/evaluate/v1/batch', body);
    t.equal(onFeature.status, 200);
    // The flag list of feature names payment-provider "(Adyen trial)"; new-checkout is enabled there.
    await tab.waitText(/Adyen trial/, '#entity-results');
    t.same(await shownRows(page), answerRows(onFeature.body), 'the feature branch answer');
    t.same((await shownRows(page))[1], ['new-checkout', 'boolean', 'true', 'default', 'none']);
  });

  await ui.test(t, "a batch over the server's 1 MiB request limit is refused on the page, with its size; nothing is sent", async (t, tab) => {
    const { page } = tab;
    const sent = batchRequests(tab);
    await tab.open('/ui/entity?namespace=catalog');
    await tab.waitText(/60 flags/);
    await page.getByLabel('Entity id').fill('user-1');
    // 20,000 characters, sent once per flag: 60 × 20 KB is about 1.2 MB.
    await page.getByLabel('Context key 1', { exact: true }).fill('note');
    await page.getByLabel('Context value 1', { exact: true }).fill('x'.repeat(20_000));
    await page.getByRole('button', { name: 'Evaluate all flags' }).click();
    const text = await tab.waitText(/above the server's request limit/, '#context-error');
    t.match(text, /^The batch for 60 flags with this context is 1\.\d MiB, above the server's request limit of 1\.0 MiB: the context is sent once per flag, so shorten it\.$/);
    t.same(sent, [], 'nothing was sent');
    t.match(await tab.text('#entity-status'), /Not evaluated yet\./);
  });

  await ui.test(t, 'the 60 flags of catalog at 375 px: no sideways scroll; the dark theme; the keyboard reaches every control', async (t, tab) => {
    const { page } = tab;
    await page.setViewportSize({ width: 375, height: 740 });
    await tab.open('/ui/entity?namespace=catalog&entity=user-1');
    await tab.waitText(/60 flags of catalog for entity "user-1"/);
    const direct = await batchFor(ui, 'catalog', 'user-1', {});
    t.same(await shownRows(page), answerRows(direct.answer.body), 'all 60 as the batch answers');
    const width = await tab.scrollWidth();
    t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
    await tab.checkpoint(t, 'ui-entity-375');

    await page.setViewportSize({ width: 800, height: 480 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.checkpoint(t, 'ui-entity-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    const { controls, reached } = await tabThroughMain(page);
    t.ok(controls.length > 60 * 2 + 10, `${controls.length} controls: two links a flag, the form`);
    t.same(reached, controls, 'Tab reaches every control, in reading order');
  });
});

t.test('with authentication on, Copy as curl carries a placeholder, never the token', async (t) => {
  const TOKEN = 'ui-entity-bootstrap-token-5b1e';
  const ui = await startUi(t, {
    authentication: ['authentication:', '  required: true', '  methods:', '    token:', '      enabled: true', `      bootstrap: { token: ${TOKEN} }`].join('\n'),
  });
  await ui.browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.url });

  await ui.test(t, 'signed in with a token: the command says <token>; with the token put in, curl gets the same JSON', async (t, tab) => {
    const { page } = tab;
    tab.allowError(/Failed to load resource: the server responded with a status of 401/);
    await tab.open('/ui/login?next=%2Fui%2Fentity%3Fentity%3Duser-42');
    await page.getByLabel('Client token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await tab.waitText(/3 flags of default for entity "user-42"/);
    const direct = await batchFor(ui, 'default', 'user-42', {}, TOKEN);
    t.equal(direct.answer.status, 200);
    t.same(await shownRows(page), answerRows(direct.answer.body));
    await tab.waitText(/The curl command/);
    await page.getByText('The curl command').click();
    await tab.waitText(/Replace <token> with a client token/);
    const command = await copyAsCurl(t, tab);
    t.match(command, "-H 'Authorization: Bearer <token>'", 'the placeholder');
    t.notMatch(command, TOKEN, 'not the token');
    t.notMatch(await page.content(), TOKEN, 'nor anywhere on the page');
    t.equal((await run('/bin/sh', ['-c', command]).catch((e: { stdout: string }) => e)).stdout.includes('"code":16'), true, 'the command as copied is refused: it holds no credential');
    const { stdout } = await run('/bin/sh', ['-c', command.replace('<token>', TOKEN)]);
    t.same(stable(JSON.parse(stdout)), stable(direct.answer.body), 'with the token put in: the same answer');
    await tab.checkpoint(t, 'ui-entity-curl');
  });
});
