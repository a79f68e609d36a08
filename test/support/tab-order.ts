/**
 * Keyboard reach for the UI's browser tests: every control inside `main` (links, buttons, inputs,
 * selects, text areas, summaries, elements with a tabindex; one stop per radio group, its checked radio) and whether
 * pressing Tab from the page's heading reaches each of them, in document order (`afterHeading`:
 * the controls that follow the heading, which Tab from it must reach).
 *
 *   const { controls, reached } = await tabThroughMain(page);
 *   t.same(reached, controls);
 */
import type { Page } from 'playwright-core';

export async function tabThroughMain(page: Page): Promise<{ controls: string[]; reached: string[]; afterHeading: string[] }> {
  // Each control gets a number in a data attribute, so the comparison names them in order.
  const controls = await page.evaluate<string[]>(`(() => {
    let n = 0;
    const list = [];
    for (const el of document.querySelectorAll('main a[href], main button, main input, main select, main textarea, main summary, main [tabindex]:not([tabindex="-1"])')) {
      if (el.disabled || (el.type === 'radio' && !el.checked) || el.closest('details:not([open])') && el.tagName !== 'SUMMARY') continue;
      el.dataset.stop = String(++n) + ' ' + (el.id || el.getAttribute('aria-label') || el.textContent.trim()).slice(0, 40);
      list.push(el.dataset.stop);
    }
    return list;
  })()`);
  // Tab starts at the heading: the controls drawn above it (a page's tabs) come before it in order.
  const afterHeading = await page.evaluate<string[]>(`(() => {
    const h = document.querySelector('main h1');
    return [...document.querySelectorAll('main [data-stop]')]
      .filter((el) => h && (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING))
      .map((el) => el.dataset.stop);
  })()`);
  await page.locator('main h1').focus();
  const reached: string[] = [];
  for (let i = 0; i < controls.length + 5; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate<string>("document.activeElement?.closest('main') ? (document.activeElement.dataset.stop ?? '(unlisted) ' + document.activeElement.tagName) : ''");
    if (stop === '') break;
    reached.push(stop);
  }
  return { controls, reached, afterHeading };
}
