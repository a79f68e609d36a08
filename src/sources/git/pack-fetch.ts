/**
 * The HTTP client isomorphic-git's fetch talks through for the mirror. isomorphic-git negotiates
 * and moves the refs well, but indexes the pack it receives by inflating every object whole: a
 * few MB of compressed zeros on any branch would become gigabytes in memory. So the pack never
 * reaches it: this client takes the pack out of the upload-pack answer, caps it
 * (`storage.git.max_fetch_size`), checks and indexes it in bounded memory (pack-index.ts), writes
 * the `.pack` and `.idx` into the repository, and hands isomorphic-git the same answer with an
 * empty pack in its place (which it skips). The objects are on disk before isomorphic-git writes
 * the refs that name them.
 *
 * Only isomorphic-git's v1 upload-pack POST is handled so; every other request (the ref
 * advertisement) goes through unchanged, with the client's default cap.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { atomicFs } from './atomic-fs.js';
import { GitTransportError, RESPONSE_TOO_LARGE, type GitHttpClient } from './http-client.js';
import { indexPack, type IndexPackOptions } from './pack-index.js';
import { PackFormatError } from './pack-format.js';
import { FLUSH, parsePktLines } from './pkt-line.js';

export interface PackFetchOptions {
  readonly http: GitHttpClient;
  /** Repository the pack is written into. */
  readonly gitdir: string;
  /** Bytes one fetch answer may carry. */
  readonly maxFetchSize: number;
  readonly maxObjectSize: number;
  readonly externalBase?: IndexPackOptions['externalBase'];
}

/** Side-band channels (gitprotocol-pack): pack data, progress text, fatal error text. */
const BAND_PACK = 1;
const BAND_PROGRESS = 2;
const BAND_ERROR = 3;

/** A valid pack of no objects: "PACK", version 2, count 0, and its SHA-1. */
const EMPTY_PACK = (() => {
  const head = Buffer.from('5041434b0000000200000000', 'hex');
  return Buffer.concat([head, createHash('sha1').update(head).digest()]);
})();

export function packFetchingHttp(opts: PackFetchOptions): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      if (!isUploadPackV1(req)) return opts.http.request(req);
      let res: GitHttpResponse;
      try {
        res = await opts.http.request({ ...req, maxResponseBytes: opts.maxFetchSize });
      } catch (err) {
        if (err instanceof GitTransportError && err.code === RESPONSE_TOO_LARGE) {
          throw new GitTransportError(`${err.message}: the fetch is refused (storage.git.max_fetch_size is ${opts.maxFetchSize} bytes)`, err.code);
        }
        throw err;
      }
      if (res.statusCode !== 200 || res.body === undefined) return res;
      const answer = await collect(res.body);
      return { ...res, body: once(await takePack(answer, opts)) };
    },
  };
}

function isUploadPackV1(req: GitHttpRequest): boolean {
  if ((req.method ?? 'GET') !== 'POST' || !new URL(req.url).pathname.endsWith('/git-upload-pack')) return false;
  const protocol = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'git-protocol')?.[1];
  return protocol === undefined || !protocol.includes('version=2');
}

/**
 * Splits the answer into its negotiation lines (kept) and the side-band pack (written to disk),
 * and returns the answer isomorphic-git gets: the same lines, then an empty pack.
 */
async function takePack(answer: Buffer, opts: PackFetchOptions): Promise<Buffer> {
  let packets;
  try {
    packets = parsePktLines(answer);
  } catch (err) {
    throw new PackFormatError(`the git server's fetch answer is not multiplexed pkt-lines (${(err as Error).message})`);
  }
  const kept: Buffer[] = [];
  // The pack's pieces are moved to the front of the answer's own buffer, over the framing they
  // came in (each move is to a lower address), so the pack is never held twice.
  let packLength = 0;
  for (const p of packets) {
    if (p.kind !== 'data') continue; // isomorphic-git skips flushes; one ends what we hand back
    const band = p.data[0];
    if (band === BAND_PACK) {
      const start = p.data.byteOffset - answer.byteOffset + 1;
      answer.copyWithin(packLength, start, start + p.data.length - 1);
      packLength += p.data.length - 1;
    } else if (band === BAND_ERROR) {
      throw new Error(`the git server failed the fetch: ${p.data.subarray(1).toString('utf8').trim()}`);
    } else if (band !== BAND_PROGRESS) {
      kept.push(encodePkt(p.data));
    }
  }
  if (packLength > 0) {
    const pack = answer.subarray(0, packLength);
    const index = await indexPack(pack, opts);
    if (index.objects > 0) {
      const base = join(opts.gitdir, 'objects', 'pack', `pack-${index.packSha}`);
      // The pack before its index: isomorphic-git finds packs by their .idx.
      await atomicFs.promises.writeFile(`${base}.pack`, pack);
      await atomicFs.promises.writeFile(`${base}.idx`, index.idx);
    }
  }
  return Buffer.concat([...kept, encodePkt(Buffer.concat([Buffer.from([BAND_PACK]), EMPTY_PACK])), FLUSH]);
}

function encodePkt(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0'), 'ascii'), payload]);
}

async function collect(body: AsyncIterableIterator<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

async function* once(data: Buffer): AsyncIterableIterator<Uint8Array> {
  yield data;
}
