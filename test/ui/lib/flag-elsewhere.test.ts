/** Which references the flag page's not-found state asks about a missing flag (src/ui/lib/flag-elsewhere.ts). */
import t from 'tap';
import { askedText, MAX_ELSEWHERE, referencesToAsk } from '../../../src/ui/lib/flag-elsewhere.js';

const served = (reference: string) => ({ reference, revision: { id: 'a' } });

t.test('the default first, only served references, never the one viewed, at most MAX_ELSEWHERE', async (t) => {
  const snapshots = {
    defaultReference: 'main',
    references: [served('main'), served('feature/x'), { reference: 'never-valid' }, ...Array.from({ length: 300 }, (_, i) => served(`b${i}`))],
  };
  const plan = referencesToAsk(snapshots, 'feature/x');
  t.equal(plan.ask.length, MAX_ELSEWHERE);
  t.same(plan.ask.slice(0, 3), ['main', 'b0', 'b1']);
  t.equal(plan.of, 301, 'every served reference but the one viewed');
  t.notOk(plan.ask.includes('never-valid'), 'a reference serving nothing cannot hold the flag');
  t.same(referencesToAsk(snapshots, undefined, 2).ask, ['feature/x', 'b0'], 'viewing the default: the others');
  t.same(referencesToAsk({ defaultReference: 'main', references: [served('main')] }, undefined).ask, [], 'nothing else to ask');
  t.equal(askedText(['main'], 1), 'main');
  t.equal(askedText(['main', 'feature'], 2), 'main and 1 other reference');
  t.equal(askedText(plan.ask, plan.of), 'main and 7 other references (of 301 served)');
});
