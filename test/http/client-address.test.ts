/**
 * Reading the client's address behind proxies (src/http/client-address.ts): X-Forwarded-For is
 * believed only from a trusted peer, read right to left, and stops at the first untrusted hop;
 * malformed entries and long headers cost nothing and believe nothing more.
 */
import t from 'tap';
import { clientAddressReader, MAX_HOPS, trustedProxyProblem } from '../../src/http/client-address.js';

t.test('no trusted proxies: the peer, whatever the header says', async (t) => {
  const read = clientAddressReader([]);
  t.equal(read('192.0.2.1', '203.0.113.7'), '192.0.2.1');
  t.equal(read('::ffff:192.0.2.1', undefined), '192.0.2.1', 'IPv4-mapped peers read as IPv4');
  t.equal(read(undefined, '203.0.113.7'), undefined, 'no peer (a closed socket): unknown');
});

t.test('trusted peers: the right-most untrusted hop', async (t) => {
  const read = clientAddressReader(['10.0.0.0/8', '192.0.2.1', 'fd00::/8']);
  t.equal(read('198.51.100.9', '203.0.113.7'), '198.51.100.9', 'an untrusted peer: its header is not believed');
  t.equal(read('192.0.2.1', undefined), '192.0.2.1', 'a trusted peer without the header');
  t.equal(read('192.0.2.1', '203.0.113.7'), '203.0.113.7');
  t.equal(read('::ffff:192.0.2.1', '203.0.113.7'), '203.0.113.7', 'a mapped trusted peer');
  t.equal(read('192.0.2.1', '6.6.6.6, 203.0.113.7, 10.9.9.9'), '203.0.113.7', 'trusted hops are skipped; the spoofable left part is not read');
  t.equal(read('192.0.2.1', '10.1.1.1,10.2.2.2'), '10.1.1.1', 'all hops trusted: the left-most');
  t.equal(read('fd00::1', '2001:db8::5'), '2001:db8::5', 'IPv6');
  t.equal(read('192.0.2.1', ['203.0.113.1', '203.0.113.2, 10.0.0.1']), '203.0.113.2', 'repeated headers join in order');
  t.equal(read('192.0.2.1', '203.0.113.7, not-an-ip'), '192.0.2.1', 'a malformed hop: the last trusted address');
  t.equal(read('192.0.2.1', '10.0.0.1, garbage'), '192.0.2.1');
  t.equal(read('192.0.2.1', '203.0.113.7, 10.0.0.1:8080'), '192.0.2.1', 'a port is not an address');
  t.equal(read('192.0.2.1', ''), '192.0.2.1', 'an empty header');
  t.equal(read('192.0.2.1', ' , '), '192.0.2.1');
});

t.test('a header of many trusted hops is read no further than MAX_HOPS', async (t) => {
  const read = clientAddressReader(['10.0.0.0/8']);
  const hops = Array.from({ length: 10_000 }, (_, i) => `10.0.${Math.floor(i / 256) % 256}.${i % 256}`);
  const header = ['203.0.113.7', ...hops].join(', ');
  const got = read('10.255.255.255', header);
  t.equal(got, hops[hops.length - MAX_HOPS], 'the walk stops after MAX_HOPS entries at the last one read');
});

t.test('config entries', async (t) => {
  for (const ok of ['10.0.0.0/8', '192.0.2.1', '::1', 'fd00::/8', '0.0.0.0/0', '::/0', '2001:db8::/128']) {
    t.equal(trustedProxyProblem(ok), undefined, ok);
  }
  t.match(trustedProxyProblem('proxy.internal'), /not an IP address or CIDR range/);
  t.match(trustedProxyProblem('10.0.0.0/33'), /prefix length must be 0 to 32/);
  t.match(trustedProxyProblem('fd00::/129'), /prefix length must be 0 to 128/);
  t.match(trustedProxyProblem('10.0.0.0/'), /prefix length/);
  t.match(trustedProxyProblem('10.0.0.0/8/8'), /prefix length/);
  t.match(trustedProxyProblem('10.0.0.0/-1'), /prefix length/);
});
