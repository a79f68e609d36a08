/**
 * Part of `npm run bench -- ui` (bench/ui.ts): the bytes on the wire of the segment page's "used
 * by" (issue 22: ≤ 100 KB for a segment of a 3,000-flag namespace) and of the namespace outline
 * the flags and segments lists read. A real `vexil serve` of the compiled build with generated
 * state (test/support/generate-state.ts) of 3,000 flags and only 3 segments, so that the segment
 * measured (the one most flags use, found from the outline) is named by thousands of rules and
 * rollouts: the worst case for its size. Read over loopback by a client that accepts gzip, as a
 * browser does; the bytes counted are those of the body as sent (compressed when the server
 * compresses). Baseline, in the same run: the document the segment page read before, the
 * namespace's evaluation snapshot (`/internal/v1/evaluation/snapshot/namespace/{ns}`). No browser:
 * the bytes do not depend on who reads them.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { generateState } from '../test/support/generate-state.js';
import type { BenchBuild } from './build.js';
import { startVexil, stop } from './http-harness.js';
import { fmtInt, fmtRatio, verdict } from './stats.js';

export const USED_BY_FLAGS = 3000;
export const USED_BY_TARGET_BYTES = 100 * 1024;

interface Wire {
  /** Bytes of the body as sent. */
  wire: number;
  encoding: string;
  /** Bytes of the body once decoded (the JSON). */
  decoded: number;
}

function wireOf(url: string): Promise<Wire & { body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', async () => {
        const raw = Buffer.concat(parts);
        const encoding = String(res.headers['content-encoding'] ?? 'identity');
        const { gunzipSync } = await import('node:zlib');
        const body = encoding === 'gzip' ? gunzipSync(raw) : raw;
        if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode} ${body.toString('utf8').slice(0, 200)}`));
        else resolve({ wire: raw.length, encoding, decoded: body.length, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

export async function measureUsageBytes(build: BenchBuild, dir: string, log: (s: string) => void): Promise<{ markdown: string; verdict: { target: string; ok: boolean } }> {
  const v = await startVexil(build, join(dir, 'used-by'), { state: generateState({ flags: USED_BY_FLAGS, namespaces: 1, segmentsPerNamespace: 3 }), config: ['data_dir: ./data'] });
  try {
    const ns = `${v.url}/api/v1/namespaces/default`;
    const outline = await wireOf(`${ns}/outline`);
    const doc = JSON.parse(outline.body.toString('utf8')) as { flags: Array<{ rules: Array<{ segments: string[] }>; rollouts: Array<{ segments?: string[] }> }> };
    if (doc.flags.length !== USED_BY_FLAGS) throw new Error(`the outline holds ${doc.flags.length} flags, expected ${USED_BY_FLAGS}`);
    const uses = new Map<string, number>();
    for (const f of doc.flags) {
      for (const s of new Set([...f.rules.flatMap((r) => r.segments), ...f.rollouts.flatMap((r) => r.segments ?? [])])) uses.set(s, (uses.get(s) ?? 0) + 1);
    }
    const [segment, flags] = [...uses].sort((a, b) => b[1] - a[1])[0]!;
    const usage = await wireOf(`${ns}/segments/${encodeURIComponent(segment)}/usage`);
    const snapshot = await wireOf(`${v.url}/internal/v1/evaluation/snapshot/namespace/default`);
    const ok = usage.wire <= USED_BY_TARGET_BYTES;
    log(`  used by: ${kb(usage.wire)} on the wire (${usage.encoding}) for segment ${segment} (${fmtInt(flags)} of ${fmtInt(USED_BY_FLAGS)} flags); the evaluation snapshot ${kb(snapshot.wire)}`);
    const row = (what: string, w: Wire) => `| ${what} | ${kb(w.decoded)} | ${w.encoding} | **${kb(w.wire)}** |`;
    const markdown = [
      `#### "Used by" of a segment of a ${fmtInt(USED_BY_FLAGS)}-flag namespace (bytes on the wire)`,
      '',
      `Generated state, one namespace, ${fmtInt(USED_BY_FLAGS)} flags and 3 segments; the segment measured, \`${segment}\`, is used by ${fmtInt(flags)} flags (the most of the three). A client accepting gzip, over loopback.`,
      '',
      '| read | JSON | encoding | on the wire |',
      '|---|---:|---|---:|',
      row(`\`GET …/segments/${segment}/usage\` (the segment page's "used by")`, usage),
      row('`GET …/outline`, every flag (the segments list\'s "used in N flags"; the flags list reads it for the flags it shows)', outline),
      row('baseline: `GET /internal/v1/evaluation/snapshot/namespace/default` (what "used by" read before)', snapshot),
      '',
      `"Used by": usage / evaluation snapshot = **${((usage.wire / snapshot.wire) * 100).toFixed(2)} %** on the wire (${fmtRatio(snapshot.wire / usage.wire)} fewer bytes). Target ≤ ${kb(USED_BY_TARGET_BYTES)}: **${verdict(ok)}**.`,
    ].join('\n');
    return { markdown, verdict: { target: `segment "used by", ${fmtInt(USED_BY_FLAGS)}-flag namespace: ≤ 100 KB on the wire (${kb(usage.wire)}, ${fmtInt(flags)} flags listed)`, ok } };
  } finally {
    await stop(v.child);
  }
}
