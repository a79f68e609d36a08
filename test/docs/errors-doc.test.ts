/**
 * docs/errors.md is generated (`npm run docs:errors`, scripts/errors-doc.ts) from the rule
 * catalogue and the refusal constructors: it must be exactly what the generator makes now, and it
 * must name every rule id and every refusal.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { REFUSALS } from '../../src/errors.js';
import { RULES } from '../../src/state/rules.js';
import { ERRORS_DOC_PATH, renderErrorsDoc } from '../../scripts/errors-doc.js';

t.test('docs/errors.md is what `npm run docs:errors` makes now', async (t) => {
  const current = readFileSync(ERRORS_DOC_PATH, 'utf8');
  t.ok(current === renderErrorsDoc(), 'docs/errors.md is up to date (run `npm run docs:errors` after changing src/state/rules.ts or REFUSALS in src/errors.ts)');
});

t.test('the page lists every rule id and every refusal, with its status and message', async (t) => {
  const page = renderErrorsDoc();
  for (const id of Object.keys(RULES)) t.ok(page.includes(`| \`${id}\` |`), id);
  for (const [name, refusal] of Object.entries(REFUSALS)) {
    const err = refusal.example();
    t.equal(err.code, 14, `${name} is Unavailable`);
    t.ok(page.includes(`| ${name} | 503 | 14 (Unavailable) |`), `${name} row`);
    t.ok(page.includes(err.message), `${name} message`);
  }
});
