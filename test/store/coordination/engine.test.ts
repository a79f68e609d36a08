/**
 * What the coordinator accepts from an engine (engine.ts): rows and notifications this code could
 * have written, nothing else; refresh requests naming one reference or every one.
 */
import t from 'tap';
import { parseClusterRevision, parseNotification, parseRefreshRequest } from '../../../src/store/coordination/engine.js';

t.test('rows', async (t) => {
  t.same(parseClusterRevision('main', 'abc', 3), { reference: 'main', revision: 'abc', sequence: 3 });
  t.same(parseClusterRevision('main', 'sha256:00ff', '42'), { reference: 'main', revision: 'sha256:00ff', sequence: 42 }, 'a bigint column read as text');
  for (const [ref, rev, seq, why] of [
    ['', 'abc', 1, 'empty reference'],
    ['main', '', 1, 'empty revision'],
    ['ma\nin', 'abc', 1, 'control character in the reference'],
    ['main', 'a\u0000b', 1, 'control character in the revision'],
    ['x'.repeat(1025), 'abc', 1, 'reference too long'],
    ['main', 'r'.repeat(257), 1, 'revision too long'],
    ['main', 'abc', 0, 'sequence below 1'],
    ['main', 'abc', 1.5, 'fractional sequence'],
    ['main', 'abc', '1e3', 'sequence not digits'],
    ['main', 'abc', 2 ** 60, 'unsafe integer'],
    [1, 'abc', 1, 'reference not a string'],
  ] as const) {
    t.equal(parseClusterRevision(ref, rev, seq), undefined, why);
  }
});

t.test('notifications', async (t) => {
  t.same(parseNotification('{"reference":"main","revision":"abc","sequence":7}'), { reference: 'main', revision: 'abc', sequence: 7 });
  for (const payload of ['', 'not json', 'null', '[]', '"main"', '{"reference":"main","revision":"abc"}', `{"reference":"${'x'.repeat(5000)}","revision":"a","sequence":1}`]) {
    t.equal(parseNotification(payload), undefined, payload.slice(0, 40));
  }
});

t.test('refresh requests', async (t) => {
  t.same(parseRefreshRequest(''), { reference: undefined }, 'every reference');
  t.same(parseRefreshRequest('feature/x'), { reference: 'feature/x' });
  t.equal(parseRefreshRequest('a\nb'), undefined);
  t.equal(parseRefreshRequest('x'.repeat(1025)), undefined);
});
