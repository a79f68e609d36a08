/** The UI's addresses (src/ui/lib/routes.ts): which page a path shows, links, the reference switch, safe returns after login. */
import t from 'tap';
import { matchRoute, paths, safeNext, switchReference } from '../../../src/ui/lib/routes.js';

t.test('paths → pages', async (t) => {
  t.same(matchRoute('/'), { page: 'home' });
  t.same(matchRoute('/ui'), { page: 'home' });
  t.same(matchRoute('/ui/'), { page: 'home' });
  t.same(matchRoute('/ui/namespaces'), { page: 'namespaces' });
  t.same(matchRoute('/ui/namespaces/default/flags'), { page: 'flags', namespace: 'default' });
  t.same(matchRoute('/ui/namespaces/a%2Fb/flags/x%20y'), { page: 'flag', namespace: 'a/b', key: 'x y' }, 'decoded');
  t.same(matchRoute('/ui/namespaces/prod/segments'), { page: 'segments', namespace: 'prod' });
  t.same(matchRoute('/ui/namespaces/prod/segments/beta/'), { page: 'segment', namespace: 'prod', key: 'beta' });
  for (const p of ['console', 'status', 'diff', 'history', 'login'] as const) t.same(matchRoute(`/ui/${p}`), { page: p });
  for (const p of ['/ui/nope', '/ui/namespaces/x', '/ui/namespaces/x/other', '/ui/namespaces/%E0/flags', '/ui/namespaces//flags', '/elsewhere']) {
    t.same(matchRoute(p), { page: 'not-found' }, p);
  }
});

t.test('links carry the reference and encode keys', async (t) => {
  t.equal(paths.namespaces(), '/ui/namespaces');
  t.equal(paths.home(), '/ui');
  t.equal(paths.home('feature'), '/ui?ref=feature');
  t.equal(paths.flags('default', 'feature/x'), '/ui/namespaces/default/flags?ref=feature%2Fx');
  t.equal(paths.flag('a b', 'k/1'), '/ui/namespaces/a%20b/flags/k%2F1');
  t.equal(paths.flags('ns', undefined, { q: 'pay', type: undefined }), '/ui/namespaces/ns/flags?q=pay');
  t.equal(paths.console({ ref: 'v1', namespace: 'ns', flag: 'f' }), '/ui/console?ref=v1&namespace=ns&flag=f');
  t.equal(paths.diff({ base: 'main', head: 'feature', impact: '' }), '/ui/diff?base=main&head=feature');
  t.equal(paths.history('feature/x', { pageToken: 'a=', limit: undefined }), '/ui/history?ref=feature%2Fx&pageToken=a%3D');
  t.equal(paths.history(), '/ui/history');
  t.equal(paths.login('/ui/status?ref=x'), '/ui/login?next=%2Fui%2Fstatus%3Fref%3Dx');
  for (const [page, key] of [['flags', 'flags'], ['segments', 'segments']] as const) {
    const href = page === 'flags' ? paths.flags('n/s', 'r') : paths.segments('n/s', 'r');
    t.same(matchRoute(href.split('?')[0]!), { page: key, namespace: 'n/s' }, 'round trip');
  }
});

t.test('switching the reference keeps the page and its filters, drops the page number', async (t) => {
  t.equal(switchReference('/ui/namespaces/default/flags?q=x&page=3', 'feature'), '/ui/namespaces/default/flags?q=x&ref=feature');
  t.equal(switchReference('/ui/status?ref=old', 'new'), '/ui/status?ref=new');
  t.equal(switchReference('/ui/history?ref=old&pageToken=abc&limit=5', 'new'), '/ui/history?ref=new&limit=5', 'a page token belongs to the old reference');
  t.equal(switchReference('/ui/status?ref=old', undefined), '/ui/status', 'the default: no ref');
  t.equal(switchReference('/ui/console', 'a&b'), '/ui/console?ref=a%26b');
});

t.test('after login, only a path of this UI (no open redirect)', async (t) => {
  t.equal(safeNext('/ui/status?ref=x'), '/ui/status?ref=x');
  for (const bad of [null, undefined, '', 'https://evil.example/', '//evil.example/ui/', '/api/v1/namespaces', '/ui/login?next=/ui/x', 'javascript:alert(1)']) {
    t.equal(safeNext(bad), '/ui', String(bad));
  }
});

t.test('the entity page: its path and its address', async (t) => {
  t.same(matchRoute('/ui/entity'), { page: 'entity' });
  t.same(matchRoute('/ui/entity/'), { page: 'entity' });
  t.equal(paths.entity({ ref: 'v1', namespace: 'ns', entity: 'u 1', context: '{"a":"b"}' }), '/ui/entity?ref=v1&namespace=ns&entity=u+1&context=%7B%22a%22%3A%22b%22%7D');
  t.equal(paths.console({ namespace: 'ns', flag: 'f', entity: 'u1', context: '' }), '/ui/console?namespace=ns&flag=f&entity=u1', 'the console trace of one flag for an entity');
});
