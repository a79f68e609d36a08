/**
 * Text a backend hands us (a commit message, a registry's WWW-Authenticate and Link headers) is
 * read in time linear in its length: each input below is ~1 MB, where the regular expressions
 * these parsers replaced backtracked quadratically (a run that would not finish within the test
 * runner's timeout). No timing assertions: finishing is the proof.
 */
import tap from 'tap';
import { createGitSource } from '../../src/sources/git/source.js';
import { nextLink, parseChallenge } from '../../src/sources/oci/registry-client.js';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo } from '../support/git-repo.js';
import { reportMissing } from '../support/requirements.js';
import { GIT_SOURCE_DEFAULTS } from '../support/config-defaults.js';

const MB = 1 << 20;

tap.test('a commit message ending in a million newlines is shown without them (git backend)', async (t) => {
  const missing = gitUnavailableReason();
  if (missing !== undefined) return reportMissing(t, 'git', missing);
  const repo = await createTestRepo(t);
  const commit = await repo.commit('main', { 'features.yml': 'namespace: default\nflags: []\n' }, { message: `fix flags${'\n'.repeat(MB)}` });
  const source = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: repo.gitdir, ref: 'main' });
  const rev = (await source.refs()).get('main');
  t.equal(rev?.id, commit);
  const files = await source.files(rev!);
  t.equal(files.revision.meta?.message, 'fix flags');
});

tap.test('WWW-Authenticate parameters: the usual forms, and 1 MB hostile headers', async (t) => {
  t.same(parseChallenge('Bearer realm="https://auth.example/token", service="reg" ,scope="repository:a/b:pull,push"'), {
    scheme: 'bearer',
    params: { realm: 'https://auth.example/token', service: 'reg', scope: 'repository:a/b:pull,push' },
  });
  t.same(parseChallenge('Bearer realm="a \\"quoted\\" \\\\ name",error=insufficient_scope'), {
    scheme: 'bearer',
    params: { realm: 'a "quoted" \\ name', error: 'insufficient_scope' },
  });
  t.same(parseChallenge('Basic'), { scheme: 'basic', params: {} });
  t.equal(parseChallenge('  '), undefined);
  // Unclosed quotes: the regex re-scanned the rest of the header for each parameter.
  const unclosed = parseChallenge(`Bearer ${'a="x,'.repeat(MB / 4)}`);
  t.equal(unclosed?.scheme, 'bearer');
  t.equal(Object.keys(unclosed?.params ?? {}).length, 1, 'an unclosed quote runs to the end');
  const many = parseChallenge(`Bearer ${'k=v,'.repeat(MB / 4)}`);
  t.same(many?.params, { k: 'v' });
  const spaces = parseChallenge(`Bearer realm${' '.repeat(MB)}x`);
  t.same(spaces?.params, {}, 'a name without = ends the list');
});

tap.test('Link header: the next page, and 1 MB hostile headers', async (t) => {
  t.equal(nextLink('</v2/a/tags/list?n=100&last=b>; rel="next"'), '/v2/a/tags/list?n=100&last=b');
  t.equal(nextLink('</first>; rel="prev", </second>; title="x"; rel=next'), '/second');
  t.equal(nextLink('</only>; rel="prev"'), undefined);
  t.equal(nextLink(''), undefined);
  t.equal(nextLink('<'.repeat(MB)), undefined, 'a million unclosed <');
  t.equal(nextLink('<>'.repeat(MB / 2)), undefined, 'half a million empty links without rel');
  t.equal(nextLink(`<u>${';'.repeat(MB)} rel=next`), 'u');
  t.equal(nextLink(`<u>;${' '.repeat(MB)}`), undefined);
});
