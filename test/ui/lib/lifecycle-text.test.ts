/** The flag page's lifecycle wording (src/ui/lib/lifecycle-text.ts): the expiry read as the `flag.expired` check reads it. */
import t from 'tap';
import { expiredText, expiryInstant, lifecycleView } from '../../../src/ui/lib/lifecycle-text.js';

t.test('a date runs out at the end of that day in UTC, a date-time at its instant', async (t) => {
  t.equal(expiryInstant('2026-11-27'), Date.parse('2026-11-28T00:00:00Z'));
  t.equal(expiryInstant('2026-11-27T08:00:00Z'), Date.parse('2026-11-27T08:00:00Z'));
  t.equal(expiryInstant('2026-11-27T08:00:00+02:00'), Date.parse('2026-11-27T06:00:00Z'));
  t.equal(expiryInstant('2026-02-31'), undefined, 'no such day');
  t.equal(expiryInstant('next week'), undefined);
  t.equal(expiryInstant('2026-11-27 08:00'), undefined);
});

t.test('how long ago', async (t) => {
  const at = (iso: string) => Date.parse(iso);
  t.equal(expiredText('2026-11-27', at('2026-11-27T23:59:59Z')), undefined, 'still that day');
  t.equal(expiredText('2026-11-27', at('2026-11-28T00:00:00Z')), 'expired today');
  t.equal(expiredText('2026-11-27', at('2026-11-29T10:00:00Z')), 'expired 1 day ago');
  t.equal(expiredText('2026-01-31', at('2026-11-27T12:00:00Z')), 'expired 299 days ago');
  t.equal(expiredText('2026-11-27T08:00:00Z', at('2026-11-27T07:59:59Z')), undefined);
  t.equal(expiredText('2026-11-27T08:00:00Z', at('2026-11-27T08:00:00Z')), 'expired today');
  t.equal(expiredText('soon', at('2030-01-01T00:00:00Z')), undefined, 'not a date: nothing to say');
});

t.test('the view of a metadata map', async (t) => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  t.same(lifecycleView({ owner: '@growth', lifecycle: 'temporary', expires: '2026-01-31', team: 'x' }, now), {
    owner: '@growth',
    lifecycle: 'temporary',
    expires: '2026-01-31',
    expired: 'expired 299 days ago',
  });
  t.same(lifecycleView({ owner: '@design', lifecycle: 'permanent' }, now), { owner: '@design', lifecycle: 'permanent' });
  t.same(lifecycleView({ owner: 42, lifecycle: '', expires: true }, now), {}, 'values that are not text are left out');
  t.same(lifecycleView(undefined, now), {});
});
