/** Who may log in through the code host (Flipt's organization and team rule) and the record's metadata. */
import t from 'tap';
import { codeHostMetadata, decideAccess, needsTeams, type AccessPolicy } from '../../../src/auth/code-host/access.js';

const member = {
  organizations: ['Acme', 'widgets'],
  teams: [
    { org: 'acme', slug: 'flag-admins' },
    { org: 'widgets', slug: 'readers' },
  ],
};

t.test('no allow-list: anyone; the record lists all their organizations and teams', async (t) => {
  const policy: AccessPolicy = { allowedOrganizations: [], allowedTeams: {} };
  t.same(decideAccess(policy, 'alice', member), {
    allowed: true,
    organizations: ['Acme', 'widgets'],
    teams: { Acme: ['flag-admins'], widgets: ['readers'] },
  });
  t.same(decideAccess(policy, 'alice', { organizations: [], teams: [] }), { allowed: true, organizations: [], teams: {} });
  t.notOk(needsTeams(policy));
});

t.test('organizations: one allowed organization is enough; names compare case-insensitively', async (t) => {
  const policy: AccessPolicy = { allowedOrganizations: ['acme', 'other'], allowedTeams: {} };
  t.same(decideAccess(policy, 'alice', member), { allowed: true, organizations: ['Acme'], teams: { Acme: ['flag-admins'] } });
  t.same(decideAccess({ allowedOrganizations: ['other'], allowedTeams: {} }, 'alice', member), {
    allowed: false,
    reason: 'code host user "alice" is not a member of an allowed organization',
  });
});

t.test('teams: a listed team of an allowed organization; an allowed organization without a teams entry admits nobody', async (t) => {
  const policy: AccessPolicy = { allowedOrganizations: ['acme', 'widgets'], allowedTeams: { ACME: ['Flag-Admins'] } };
  t.ok(needsTeams(policy));
  t.same(decideAccess(policy, 'alice', member), { allowed: true, organizations: ['Acme'], teams: { Acme: ['flag-admins'] } });
  const onlyWidgets = { organizations: ['widgets'], teams: [{ org: 'widgets', slug: 'readers' }] };
  t.same(decideAccess(policy, 'bob', onlyWidgets), {
    allowed: false,
    reason: 'code host user "bob" is not in an allowed team of an allowed organization',
  });
  const otherTeam = { organizations: ['acme'], teams: [{ org: 'acme', slug: 'interns' }] };
  t.equal(decideAccess(policy, 'carol', otherTeam).allowed, false);
  const teamButNotMember = { organizations: [], teams: [{ org: 'acme', slug: 'flag-admins' }] };
  t.equal(decideAccess(policy, 'dave', teamButNotMember).allowed, false, 'the organization membership is required too');
});

t.test('metadata: only non-empty values; memberships only when read', async (t) => {
  const user = { login: 'alice', id: '1001', name: '', email: '', avatarUrl: 'https://img.example.test/a.png' };
  t.same({ ...codeHostMetadata(user, '') }, {
    'io.svc.auth.code_host.login': 'alice',
    'io.svc.auth.code_host.id': '1001',
    'io.svc.auth.code_host.picture': 'https://img.example.test/a.png',
    'io.svc.auth.picture': 'https://img.example.test/a.png',
  });
  const full = codeHostMetadata({ ...user, name: 'Alice' }, 'alice@example.test', { allowed: true, organizations: ['acme'], teams: { acme: ['x'] } });
  t.equal(full['io.svc.auth.code_host.email'], 'alice@example.test');
  t.equal(full['io.svc.auth.email'], 'alice@example.test');
  t.equal(full['io.svc.auth.code_host.name'], 'Alice');
  t.equal(full['io.svc.auth.code_host.organizations'], '["acme"]');
  t.equal(full['io.svc.auth.code_host.teams'], '{"acme":["x"]}');
});
