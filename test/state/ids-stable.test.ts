import { hash } from 'node:crypto';
import t from 'tap';
import { FlagIds, SegmentIds } from '../../src/state/ids.js';

// The id layout written out independently of ids.ts (xxxxxxxx-xxxx-8xxx-Vxxx-KPPPPPPPPPPP over the
// SHA-1 of `vexil-state-ids!` + owner name), so that a faster way of writing ids cannot change them:
// an id read from one response must still resolve after an upgrade.
function expected(owner: string, kind: number, payload: number): string {
  const hex = hash('sha1', `vexil-state-ids!${owner}`, 'hex');
  const v = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const tail = (kind * 2 ** 44 + payload).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${v}${hex.slice(17, 20)}-${tail}`;
}

t.test('flag and segment ids keep their values', async (t) => {
  const f = new FlagIds('default', 'checkout');
  t.equal(f.rule(1), expected('flag/default/checkout', 2, 1));
  t.equal(f.rule(300), expected('flag/default/checkout', 2, 300));
  t.equal(f.rollout(2), expected('flag/default/checkout', 4, 2));
  t.equal(f.distribution(2, 1), expected('flag/default/checkout', 3, 2 * 2 ** 20 + 1));
  t.equal(new SegmentIds('team', 'beta').constraint(0), expected('segment/team/beta', 5, 0));
  // A literal, computed once: the scheme itself must not drift either.
  t.equal(new FlagIds('default', 'checkout').rule(1), '8e8a7948-3b7d-84e2-b2ac-200000000001');
  t.match(f.variant('on'), /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-1[0-9a-f]{11}$/);
  t.equal(f.variant('on').slice(0, 24), expected('flag/default/checkout', 2, 1).slice(0, 24), 'variants share the owner prefix');
});
