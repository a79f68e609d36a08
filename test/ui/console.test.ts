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

/** Types a context into the key/value rows (adding rows as needed). */
async function fillRows(page: Page, context: Record<string, string>): Promise<void> {
  const entries = Object.entries(context);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) await page.getByRole('button', { name: 'Add context row' }).click();
    await page.getByLabel(`Context key ${i + 1}`, { exact: true }).fill(entries[i]![0]);
    await page.getByLabel(`Context value ${i + 1}`, { exact: true }).fill(entries[i]![1]);
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
    t.same([address.get('flag'), address.get('entity'), address.get('context')], ['payment-provider', 'user-42', '{"region":"eu","country":"ch"}'], 'the inputs are in the address');
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

    // Under 18: the beta segment fails on age; for this entity the 25 % threshold does not apply either.
    await page.getByLabel('Context (JSON object of strings)').fill('{"plan": "beta", "age": "12"}');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    text = await tab.waitText(words('✗ failed: age ≥ 18; got "12"'));
    t.match(text, words('Rollout 1: segment beta → true not matched ✗ failed: segment beta (all constraints)'));
    t.match(text, /Rollout 2: threshold 25 % → true\s+not matched\s+bucket \d+ ≥ 25/);
    t.match(text, words("Why No rollout matched (2 rollouts): the flag's enabled value, true."));
    api = await boolean('dark-mode', 'user-1', { plan: 'beta', age: '12' });
    t.same(await shownResult(page), booleanFields(api.body));

    // A context that is not a JSON object of strings is refused on the page, before any request.
    await page.getByLabel('Context (JSON object of strings)').fill('{"plan": ');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await tab.waitText(/JSON/, '#context-error');
  });
});
