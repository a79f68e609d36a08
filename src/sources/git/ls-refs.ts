/**
 * Asks the Git server which branches and tags exist, in as few round trips as the protocol allows.
 *
 * Protocol v2 answers `ls-refs` filtered to refs/heads/ and refs/tags/ (so a host's thousands of
 * pull-request refs are never transferred) with tags peeled. Over HTTP, v2 needs the capability
 * advertisement (GET info/refs) before the first command, but commands are stateless POSTs: once
 * the server has said it speaks v2, every later listing is that one POST. A v0/v1 server lists
 * its refs in the advertisement itself: one GET per listing. Either way a poll where nothing
 * changed costs one HTTP round trip.
 */
import { DELIM, FLUSH, parsePktLines, pktLine, pktText, type Pkt } from './pkt-line.js';
import { GitServerError } from './errors.js';
import type { GitHttpClient } from './http-client.js';

export interface RemoteRef {
  /** Full name: refs/heads/main, refs/tags/v1. */
  readonly name: string;
  /** What the ref points at (a tag object for an annotated tag). */
  readonly oid: string;
  /** For an annotated tag: the object it finally points at (normally a commit). */
  readonly peeled?: string;
}

export interface RefListerOptions {
  /** Repository URL without credentials in it. */
  readonly url: string;
  readonly http: GitHttpClient;
  /** Fresh Authorization headers for each request. */
  readonly headers: () => Promise<Record<string, string>>;
  readonly hasCredentials: boolean;
}

export interface RefLister {
  list(): Promise<RemoteRef[]>;
  /** Which protocol the server answered with last (0 = not asked yet). */
  readonly protocolVersion: 0 | 1 | 2;
}

const SERVICE = 'git-upload-pack';
const LISTED = ['refs/heads/', 'refs/tags/'];
const OID = /^[0-9a-f]{40}$/;

export function createRefLister(opts: RefListerOptions): RefLister {
  let version: 0 | 1 | 2 = 0;

  async function lsRefs(): Promise<RemoteRef[]> {
    const body = Buffer.concat([
      pktLine('command=ls-refs\n'),
      pktLine('agent=git/isomorphic-git-vexil\n'),
      DELIM,
      pktLine('peel\n'),
      ...LISTED.map((p) => pktLine(`ref-prefix ${p}\n`)),
      FLUSH,
    ]);
    const res = await opts.http.request({
      url: `${opts.url}/${SERVICE}`,
      method: 'POST',
      headers: {
        ...(await opts.headers()),
        'Content-Type': `application/x-${SERVICE}-request`,
        Accept: `application/x-${SERVICE}-result`,
        'Git-Protocol': 'version=2',
      },
      body: (async function* () {
        yield body;
      })(),
    });
    const data = await readBody(res.body);
    if (res.statusCode !== 200) throw new GitServerError(res.statusCode, res.statusMessage, 'listing references', opts.hasCredentials);
    return parseLsRefs(parsePktLines(data));
  }

  async function advertise(): Promise<RemoteRef[] | 'v2'> {
    const res = await opts.http.request({
      url: `${opts.url}/info/refs?service=${SERVICE}`,
      method: 'GET',
      headers: { ...(await opts.headers()), 'Git-Protocol': 'version=2' },
    });
    const data = await readBody(res.body);
    if (res.statusCode !== 200) throw new GitServerError(res.statusCode, res.statusMessage, 'listing references', opts.hasCredentials);
    const type = res.headers?.['content-type'] ?? '';
    if (!type.startsWith(`application/x-${SERVICE}-advertisement`)) {
      throw new Error(`the server is not a Git smart-HTTP server (content type ${JSON.stringify(type)}): check storage.git.repository`);
    }
    let pkts = parsePktLines(data);
    // Smart HTTP prefixes the advertisement with "# service=git-upload-pack" and a flush.
    if (pktText(pkts[0] ?? { kind: 'flush' })?.startsWith('# service=')) pkts = pkts.slice(2);
    if (pktText(pkts[0] ?? { kind: 'flush' }) === 'version 2') return 'v2';
    return parseAdvertisement(pkts);
  }

  return {
    get protocolVersion() {
      return version;
    },
    async list() {
      if (version === 2) {
        try {
          return await lsRefs();
        } catch (err) {
          // A server that stopped accepting bare v2 POSTs (a proxy in front changed...): advertise again.
          if (!(err instanceof GitServerError) || err.status === 401 || err.status === 403 || err.status >= 500) throw err;
          version = 0;
        }
      }
      const adv = await advertise();
      if (adv !== 'v2') {
        version = 1;
        return adv;
      }
      version = 2;
      return lsRefs();
    },
  };
}

function listed(name: string): boolean {
  return LISTED.some((p) => name.startsWith(p));
}

/** `<oid> <name>[ symref-target:<t>][ peeled:<oid>]` lines up to the flush. */
export function parseLsRefs(pkts: readonly Pkt[]): RemoteRef[] {
  const out: RemoteRef[] = [];
  for (const p of pkts) {
    const line = pktText(p);
    if (line === undefined) break;
    const [oid = '', name = '', ...attrs] = line.split(' ');
    if (!OID.test(oid) || !listed(name)) continue;
    const peeled = attrs.find((a) => a.startsWith('peeled:'))?.slice('peeled:'.length);
    out.push(peeled !== undefined && OID.test(peeled) ? { name, oid, peeled } : { name, oid });
  }
  return out;
}

/** v0/v1: `<oid> <name>\0<capabilities>` first, then `<oid> <name>`, peeled tags as `<name>^{}`. */
export function parseAdvertisement(pkts: readonly Pkt[]): RemoteRef[] {
  const byName = new Map<string, { oid: string; peeled?: string }>();
  for (const p of pkts) {
    const line = pktText(p);
    if (line === undefined) break;
    const text = line.split('\0')[0] ?? '';
    const space = text.indexOf(' ');
    const oid = text.slice(0, space);
    const name = text.slice(space + 1);
    if (!OID.test(oid)) continue;
    if (name.endsWith('^{}')) {
      const tag = byName.get(name.slice(0, -3));
      if (tag !== undefined) tag.peeled = oid;
      continue;
    }
    if (listed(name)) byName.set(name, { oid });
  }
  return [...byName].map(([name, v]) => (v.peeled !== undefined ? { name, oid: v.oid, peeled: v.peeled } : { name, oid: v.oid }));
}

async function readBody(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  if (body === undefined) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return Buffer.concat(parts);
}
