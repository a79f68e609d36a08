/** The checks as the pages word them (src/ui/lib/check-text.ts). */
import t from 'tap';
import { bySeverity, countByFlag, countText, locationText } from '../../../src/ui/lib/check-text.js';
import type { Check } from '../../../src/ui/types.js';

const check = (over: Partial<Check>): Check => ({
  rule: 'rule.unreachable',
  severity: 'warning',
  message: 'm',
  hint: '',
  file: 'a.yml',
  line: 3,
  column: 5,
  namespaceKey: 'default',
  flagKey: 'f',
  segmentKey: '',
  ...over,
});

t.test('errors and warnings per flag; information and segment checks not counted', async (t) => {
  const counts = countByFlag([
    check({}),
    check({ severity: 'error' }),
    check({ flagKey: 'g' }),
    check({ flagKey: 'g', severity: 'info' }),
    check({ flagKey: '', segmentKey: 's' }),
    check({ flagKey: 'h', severity: 'info' }),
  ]);
  t.same([...counts], [
    ['f', { errors: 1, warnings: 1 }],
    ['g', { errors: 0, warnings: 1 }],
  ]);
  t.equal(countText(counts.get('f')), '1 error, 1 warning');
  t.equal(countText({ errors: 2, warnings: 3 }), '2 errors, 3 warnings');
  t.equal(countText(counts.get('h')), '');
});

t.test('locations and order', async (t) => {
  t.equal(locationText({ file: 'a.yml', line: 3, column: 5 }), 'a.yml:3:5');
  t.equal(locationText({ file: 'a.yml', line: 3, column: 0 }), 'a.yml:3');
  t.equal(locationText({ file: 'a.yml', line: 0, column: 0 }), 'a.yml');
  t.equal(locationText({ file: '', line: 0, column: 0 }), '');
  t.same(
    bySeverity([check({ severity: 'info', line: 1 }), check({ line: 2 }), check({ severity: 'error', line: 3 }), check({ line: 4 })]).map((c) => c.line),
    [3, 2, 4, 1],
  );
});
