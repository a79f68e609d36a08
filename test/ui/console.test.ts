/**
 * The evaluation console in headless Chromium against a real `vexil serve` on a real Git
 * repository: for the same flag, entity and context, the result the page shows (variant or value,
 * match, reason, segments, attachment) equals what `POST /evaluate/v1/variant` and
 * `/evaluate/v1/boolean` answer when the test asks them with Node's fetch; the page says which rule
 * or rollout decided and which constraint failed; the context can be typed as rows or as JSON; the
 * inputs are in the address, and switching the reference re-runs the evaluation on that branch.
 */
import tap from 'tap';
import type { Page } from 'playwright-core';
import { tabThroughMain } from '../support/tab-order.js';
import { startUi, uiTests, words } from '../support/ui-harness.js';

const t = uiTests(tap);

/** The result fields the page shows (`dd[data-field]`), by label in lower case. */
async function shownResult(page: Page): Promise<Record<string, string>> {
  const fields = page.locator('#console-result dd[data-field]');
  const out: Record<string, string> = {};
  for (const dd of await fields.all()) out[(await dd.getAttribute('data-field'))!] = (await dd.innerText()).trim();
  // The page pretty-prints the attachment: compare its JSON value.
  if (out.attachment !== undefined && out.attachment !== '(none)') out.attachment = JSON.stringify(JSON.parse(out.attachment));
  return out;
}

/** The same fields from a `/evaluate/v1/variant` body. */
function variantFields(body: Record<string, any>): Record<string, string> {
  return {
    variant: body.variantKey,
    match: String(body.match),
    reason: body.reason,
    segments: body.segmentKeys.join(', '),
    attachment: body.variantAttachment === '' ? '(none)' : JSON.stringify(JSON.parse(body.variantAttachment)),
  };
}

/** The same fields from a `/evaluate/v1/boolean` body. */
function booleanFields(body: Record<string, any>): Record<string, string> {
  return { value: String(body.enabled), reason: body.reason, segments: body.segmentKeys.join(', ') || '(none)' };
}

/**
 * Types a context into the key/value rows: a key offered as a ready row gets its value there,
 * another key takes a blank row or a new one.
 */
async function fillRows(page: Page, context: Record<string, string>): Promise<void> {
  const keysNow = () => page.locator('.context-rows input[id^="context-key-"]').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
  for (const [key, value] of Object.entries(context)) {
    let keys = await keysNow();
    let i = keys.indexOf(key);
    if (i < 0) {
      i = keys.indexOf('');
      if (i < 0) {
        await page.getByRole('button', { name: 'Add context row' }).click();
        keys = await keysNow();
        i = keys.length - 1;
      }
      await page.getByLabel(`Context key ${i + 1}`, { exact: true }).fill(key);
    }
    await page.getByLabel(`Context value ${i + 1}`, { exact: true }).fill(value);
  }
}

t.test('the evaluation console agrees with the evaluation API', async (t) => {
  const ui = await startUi(t);
  const variant = (flagKey: string, entityId: string, context: Record<string, string>) =>
    ui.post('/evaluate/v1/variant', { namespaceKey: 'default', flagKey, entityId, context });
  const boolean = (flagKey: string, entityId: string, context: Record<string, string>) =>
    ui.post('/evaluate/v1/boolean', { namespaceKey: 'default', flagKey, entityId, context });

  await ui.test(t, 'a variant flag: the result equals POST /evaluate/v1/variant; the rule that decided', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/console');
    await tab.waitText(/Not evaluated yet\./);
    await page.getByLabel('Flag', { exact: true }).fill('payment-provider');
    await tab.waitText(/variant flag, enabled/);
    await tab.waitText(/read by segment eu/); // the keys the segments read, offered as ready rows
    await page.getByLabel('Entity id').fill('user-42');
    await fillRows(page, { region: 'eu', country: 'ch' });
    await page.getByRole('button', { name: 'Evaluate' }).click();
    const text = await tab.waitText(/default\/payment-provider for entity "user-42": variant/);

    const api = await variant('payment-provider', 'user-42', { region: 'eu', country: 'ch' });
    t.equal(api.status, 200);
    t.same(await shownResult(page), variantFields(api.body));
    t.same([api.body.variantKey, api.body.reason, api.body.segmentKeys], ['adyen', 'MATCH_EVALUATION_REASON', ['eu']], 'rule 1 (segment eu) decided');
    t.match(text, words('Why Rule 1 decided: segment eu matched'));
    t.match(text, words('Rule 1: segment eu decided ✓ matched: segment eu (any constraint) ✓ matched: region is "eu"; got "eu"'), 'the trace names the segment and its constraints');
    const address = new URL(page.url()).searchParams;
    t.same([address.get('flag'), address.get('entity')], ['payment-provider', 'user-42'], 'the inputs are in the address');
    t.same(JSON.parse(address.get('context')!), { region: 'eu', country: 'ch' }, 'the context in the address: what was sent, not the empty ready rows');
    await tab.checkpoint(t, 'ui-console');
  });

  await ui.test(t, 'no segment matches rule 1: the failed constraint, the distribution, the same variant as the API', async (t, tab) => {
    const { page } = tab;
    // A shared address runs at once.
    await tab.open(`/ui/console?namespace=default&flag=payment-provider&entity=user-7&context=${encodeURIComponent('{"region":"us"}')}`);
    const text = await tab.waitText(/default\/payment-provider for entity "user-7": variant/);
    const api = await variant('payment-provider', 'user-7', { region: 'us' });
    t.same(await shownResult(page), variantFields(api.body));
    t.same(api.body.segmentKeys, ['everyone'], 'rule 2 decided');
    t.match(text, words('Rule 1: segment eu not matched ✗ failed: segment eu (any constraint) ✗ failed: region is "eu"; got "us"'), 'the constraint that failed');
    t.match(text, words('Rule 2: segment everyone decided ✓ matched: segment everyone (no constraints: matches everyone)'));
    t.match(text, /Why\s+Rule 2 decided: segment everyone matched, bucket \d+ is in stripe \[0, 500\)/);
    t.match(text, words('of 0–999: stripe [0, 500) ✓ (the bucket is here), adyen [500, 1000)'), 'the bucket against the 50/50 ranges');

    // The same entity on the feature branch (the 50/50 split moved to 40/60) is evaluated again.
    await page.getByLabel('Reference', { exact: true }).selectOption('feature');
    await page.waitForURL(/[?&]ref=feature(&|$)/);
    await tab.waitText(words('of 0–999: stripe [0, 400) ✓ (the bucket is here), adyen [400, 1000)'));
    const onFeature = await ui.post('/evaluate/v1/variant', { namespaceKey: 'default', flagKey: 'payment-provider', entityId: 'user-7', context: { region: 'us' }, reference: 'feature' });
    t.equal(onFeature.status, 200);
    t.equal((await shownResult(page)).variant, onFeature.body.variantKey, 'the feature branch answer');
  });

  await ui.test(t, 'a boolean flag with a JSON context: the result equals POST /evaluate/v1/boolean', async (t, tab) => {
    const { page } = tab;
    await tab.open('/ui/console?flag=dark-mode');
    await tab.waitText(/boolean flag, enabled/);
    await page.getByLabel('Entity id').fill('user-1');
    await page.getByLabel('JSON object').check();
    await page.getByLabel('Context (JSON object of strings)').fill('{"plan": "beta", "age": "30"}');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    let text = await tab.waitText(/default\/dark-mode for entity "user-1": value/);
    let api = await boolean('dark-mode', 'user-1', { plan: 'beta', age: '30' });
    t.same(await shownResult(page), booleanFields(api.body));
    t.same([api.body.enabled, api.body.reason], [true, 'MATCH_EVALUATION_REASON'], 'the beta rollout decided');
    t.match(text, words('Rollout 1: segment beta → true decided ✓ matched: segment beta (all constraints) ✓ matched: plan is "beta"; got "beta" ✓ matched: age ≥ 18; got "30"'));

    // Under 18: the beta segment fails on age; for this entity the 25% threshold does not apply either.
    await page.getByLabel('Context (JSON object of strings)').fill('{"plan": "beta", "age": "12"}');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    text = await tab.waitText(words('✗ failed: age ≥ 18; got "12"'));
    t.match(text, words('Rollout 1: segment beta → true not matched ✗ failed: segment beta (all constraints)'));
    t.match(text, /Rollout 2: threshold 25% → true\s+not matched\s+bucket \d+ ≥ 25/);
    t.match(text, words("Why No rollout matched (2 rollouts): the flag's enabled value, true."));
    api = await boolean('dark-mode', 'user-1', { plan: 'beta', age: '12' });
    t.same(await shownResult(page), booleanFields(api.body));

    // A context that is not a JSON object of strings is refused on the page, before any request.
    await page.getByLabel('Context (JSON object of strings)').fill('{"plan": ');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await tab.waitText(/JSON/, '#context-error');
  });
});

t.test('the console: a required entity id, keys missing from the context, all flags for this entity, 375 px', async (t) => {
  const ui = await startUi(t);

  await ui.test(t, 'no flag or an empty entity id is not evaluated: an inline message, no request', async (t, tab) => {
    const { page } = tab;
    const explains: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/evaluate/v1/')) explains.push(r.url());
    });
    await tab.open('/ui/console');
    await tab.waitText(/3 flags in default/);
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await tab.waitText(/Choose a flag to evaluate\./, '#console-flag-error');
    t.equal(await page.evaluate<string>('document.activeElement.id'), 'console-flag', 'no flag: the focus goes to the flag field');
    await page.getByLabel('Flag', { exact: true }).fill('dark-mode');
    await tab.waitText(/boolean flag, enabled/);
    t.equal(await page.locator('#console-flag-error').count(), 0, 'the message goes once a flag is typed');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    const text = await tab.waitText(/Type an entity id, or generate one/, '#entity-error');
    t.match(text, /every evaluation is for one entity/);
    t.equal(await page.getByLabel('Entity id').getAttribute('aria-invalid'), 'true');
    t.equal(await page.evaluate<string>('document.activeElement.id'), 'entity-id', 'the focus goes to the field to fill');
    t.match(await tab.text('#console-status'), /Not evaluated yet\./);
    t.same(explains, [], 'nothing was sent (neither without a flag nor without an entity id)');

    await page.getByRole('button', { name: 'Generate' }).click();
    const generated = await page.getByLabel('Entity id').inputValue();
    t.match(generated, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random UUID');
    t.equal(await page.locator('#entity-error').count(), 0, 'the message goes once there is an id');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await tab.waitText(new RegExp(`default/dark-mode for entity "${generated}": value`));
    t.equal(explains.length, 1, 'one request once the id is there');
  });

  await ui.test(t, 'a key the trace found missing is added as a row by its button, focused for its value', async (t, tab) => {
    const { page } = tab;
    // JSON mode with an empty context: the segments' keys are not rows yet.
    await tab.open(`/ui/console?flag=dark-mode&entity=user-1&mode=json&context=${encodeURIComponent('{"age":"30"}')}`);
    let text = await tab.waitText(/default\/dark-mode for entity "user-1": value/);
    t.match(text, words('✗ failed: plan is "beta"; not in the context Add plan to the context'));
    await page.getByRole('button', { name: 'Add plan to the context' }).first().click();
    t.equal(await page.getByLabel('Key/value rows').isChecked(), true, 'switched to rows');
    const focused = await page.evaluate<string>('document.activeElement.id');
    t.match(focused, /^context-value-\d+$/, 'the focus is on a value field');
    const row = Number(focused.split('-').pop());
    t.equal(await page.getByLabel(`Context key ${row + 1}`, { exact: true }).inputValue(), 'plan', "on the new row's value");
    t.equal(await page.getByLabel(`Context value ${row + 1}`, { exact: true }).inputValue(), '');
    await page.keyboard.type('beta');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    text = await tab.waitText(words('✓ matched: plan is "beta"; got "beta"'));
    t.match(text, words('✓ matched: age ≥ 18; got "30"'), 'the context typed before is kept');
    const api = await ui.post('/evaluate/v1/boolean', { namespaceKey: 'default', flagKey: 'dark-mode', entityId: 'user-1', context: { age: '30', plan: 'beta' } });
    t.same(await shownResult(page), booleanFields(api.body));
  });

  await ui.test(t, 'at 375 px with an attachment the console does not scroll sideways; the dark theme', async (t, tab) => {
    const { page } = tab;
    // An attachment with a long line (a URL) on the feature branch: its <pre> must scroll inside the
    // result, not widen the page (660 px here before the fix).
    await ui.push('feature', 'attachment', 'Stripe: the checkout URL in the attachment');
    t.equal((await ui.post('/meta/refresh', {})).status, 200);
    await page.setViewportSize({ width: 375, height: 740 });
    await tab.open(`/ui/console?ref=feature&flag=payment-provider&entity=user-7&context=${encodeURIComponent('{"region":"us"}')}`);
    await tab.waitText(/default\/payment-provider for entity "user-7": variant stripe/);
    await tab.waitText(/"checkoutUrl": "https:\/\/pay\.example\.com\/stripe\/checkout\/v2\/sessions"/);
    const width = await tab.scrollWidth();
    t.ok(width <= 375, `no horizontal scroll at 375 px (scrollWidth ${width})`);
    await tab.checkpoint(t, 'ui-console-375');
    await page.setViewportSize({ width: 800, height: 480 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab.checkpoint(t, 'ui-console-dark');
    const { controls, reached } = await tabThroughMain(page);
    t.ok(controls.some((c) => / Generate$/.test(c)) && controls.some((c) => /Add country to the context/.test(c)), 'the new controls are among them');
    t.same(reached, controls, 'Tab reaches every control of the console, in reading order');
  });

  await ui.test(t, '"All flags for this entity" opens the entity page with the same entity and context', async (t, tab) => {
    const { page } = tab;
    await tab.open(`/ui/console?flag=payment-provider&entity=user-7&context=${encodeURIComponent('{"region":"eu"}')}`);
    await tab.waitText(/default\/payment-provider for entity "user-7": variant adyen/);
    await page.getByRole('link', { name: 'All flags for this entity' }).click();
    const text = await tab.waitText(/3 flags of default for entity "user-7"/);
    t.match(text, /What does this entity get/);
    const address = new URL(page.url());
    t.same([address.pathname, address.searchParams.get('entity'), address.searchParams.get('context')], ['/ui/entity', 'user-7', '{"region":"eu"}']);
    t.match(await tab.text('#entity-results'), /payment-provider\s+Payment provider\s+variant\s+adyen\s+match\s+eu/);
  });
});
