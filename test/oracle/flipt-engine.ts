/**
 * Flipt's own evaluation engine as an oracle: @flipt-io/flipt-client-js 0.5.1 (the Rust
 * `flipt-evaluation` crate compiled to WASM), fed the client snapshot JSON of §4a through the
 * client's `fetcher` hook, then called raw (`engine.evaluate_variant/boolean`, without the JS
 * wrapper that refuses empty entity ids: Flipt's server accepts them).
 *
 * One engine per namespace (the engine is built for one namespace); `load` swaps every engine's
 * snapshot, so one oracle serves any number of states.
 *
 * Known divergence neutralized here, for every case: the engine does not bucket distributions the
 * way Flipt v1 does. It normalizes the widths to their sum and rounds the cumulative bounds
 * (forcing the last to 1000): Flipt v2's behaviour, which Flipt PR #5581 ported from this engine
 * to the v2 server (flipt-semantics.md §5). Flipt v1 gives each distribution
 * trunc(float32(rollout) * 10) buckets and leaves the rest of 0..999 to no variant (§2.3). So
 * each rule's distributions are rewritten as their v1 widths in per-mille integers, plus a
 * sentinel distribution for the uncovered tail; with integer widths summing to 1000 the engine's
 * normalization is the identity (checked bucket by bucket in oracle-adapter.test.ts), and a
 * sentinel hit is turned back into v1's "bucket outside every distribution" result (§2.2 table:
 * match=false, the rule's segment keys, reason DEFAULT with a default variant else UNKNOWN, the
 * default variant's key and attachment).
 */
import { FliptClient } from '@flipt-io/flipt-client-js';
import type { SnapshotDistribution, SnapshotDocument } from '../support/flipt-snapshot.js';

export const GAP_VARIANT = '\u0000oracle-gap';

export type Outcome =
  | {
      readonly kind: 'variant';
      readonly match: boolean;
      readonly reason: string;
      readonly variantKey: string;
      readonly variantAttachment: string;
      readonly segmentKeys: readonly string[];
    }
  | { readonly kind: 'boolean'; readonly enabled: boolean; readonly reason: string; readonly segmentKeys: readonly string[] }
  | { readonly kind: 'error'; readonly message: string };

interface RawEngine {
  snapshot(doc: unknown): void;
  evaluate_variant(req: { flag_key: string; entity_id: string; context: Record<string, string> }): RawResult;
  evaluate_boolean(req: { flag_key: string; entity_id: string; context: Record<string, string> }): RawResult;
}
interface RawResult {
  status: string;
  errorMessage?: string;
  result?: {
    match?: boolean;
    enabled?: boolean;
    reason: string;
    variant_key?: string;
    variant_attachment?: string;
    segment_keys?: string[];
  };
}

/** Flipt v1's width of one distribution in buckets of 1000 (flipt-semantics.md §2.3). */
export function v1Width(rollout: number): number {
  const r = Math.fround(rollout);
  return r > 0 ? Math.trunc(Math.fround(r * 10)) : 0;
}

/**
 * The distributions the engine must see so that its normalized bounds are Flipt v1's bounds:
 * the v1 width of each distribution with rollout > 0 (zero widths dropped: they can never be
 * picked), then the uncovered tail as the sentinel. No distribution with rollout > 0 at all stays
 * empty ("rule matched, no distributions": match=true with the default variant, in both).
 */
export function v1Distributions(ds: readonly SnapshotDistribution[]): SnapshotDistribution[] {
  const valid = ds.filter((d) => Math.fround(d.rollout) > 0);
  if (valid.length === 0) return [];
  const out: SnapshotDistribution[] = [];
  let total = 0;
  for (const d of valid) {
    const w = v1Width(d.rollout);
    if (w === 0) continue;
    total += w;
    out.push({ ...d, rollout: w });
  }
  if (total > 1000) throw new Error(`distributions cover ${total} buckets: vexil refuses sums above 100, the generator must not make them`);
  if (total < 1000) out.push({ id: '', ruleId: '', variantId: GAP_VARIANT, variantKey: GAP_VARIANT, variantAttachment: '', rollout: 1000 - total });
  return out;
}

export function adaptForEngine(doc: SnapshotDocument): SnapshotDocument {
  return {
    ...doc,
    flags: doc.flags.map((f) => ({ ...f, rules: f.rules.map((r) => ({ ...r, distributions: v1Distributions(r.distributions) })) })),
  };
}

export class FliptEngineOracle {
  private readonly defaults = new Map<string, Map<string, { key: string; attachment: string } | undefined>>();

  private constructor(private readonly engines: Map<string, RawEngine>) {}

  static async create(namespaces: readonly string[]): Promise<FliptEngineOracle> {
    const engines = new Map<string, RawEngine>();
    const warn = console.warn;
    console.warn = () => {}; // "using deprecated parameters for the initialization function" (wasm-bindgen), once per init
    try {
      for (const ns of namespaces) {
        const empty = { namespace: { key: ns }, flags: [] };
        const client = await FliptClient.init({
          namespace: ns,
          url: 'http://127.0.0.1:1',
          updateInterval: 0,
          fetcher: async () => ({ ok: true, status: 200, statusText: 'OK', headers: { get: () => null }, json: async () => empty }),
        });
        engines.set(ns, (client as unknown as { engine: RawEngine }).engine);
      }
    } finally {
      console.warn = warn;
    }
    return new FliptEngineOracle(engines);
  }

  /**
   * Replaces every engine's state; a namespace without a document gets an empty one.
   * `raw` skips the bucketing rewrite (only to show the engine's own bucketing in tests).
   */
  load(docs: ReadonlyMap<string, SnapshotDocument>, opts: { raw?: boolean } = {}): void {
    this.defaults.clear();
    for (const [ns, engine] of this.engines) {
      const doc = docs.get(ns) ?? { namespace: { key: ns }, flags: [] };
      engine.snapshot(opts.raw ? doc : adaptForEngine(doc));
      this.defaults.set(ns, new Map(doc.flags.map((f) => [f.key, f.defaultVariant])));
    }
    for (const ns of docs.keys()) if (!this.engines.has(ns)) throw new Error(`oracle has no engine for namespace ${ns}`);
  }

  variant(ns: string, flagKey: string, entityId: string, context: Record<string, string>): Outcome {
    const r = this.engine(ns).evaluate_variant({ flag_key: flagKey, entity_id: entityId, context });
    if (r.status !== 'success' || !r.result) return { kind: 'error', message: r.errorMessage ?? 'failure' };
    const x = r.result;
    const segmentKeys = x.segment_keys ?? [];
    if (x.variant_key === GAP_VARIANT) {
      const dv = this.defaults.get(ns)?.get(flagKey);
      return {
        kind: 'variant',
        match: false,
        reason: dv ? 'DEFAULT_EVALUATION_REASON' : 'UNKNOWN_EVALUATION_REASON',
        variantKey: dv?.key ?? '',
        variantAttachment: dv?.attachment ?? '',
        segmentKeys,
      };
    }
    return {
      kind: 'variant',
      match: x.match === true,
      reason: x.reason,
      variantKey: x.variant_key ?? '',
      variantAttachment: x.variant_attachment ?? '',
      segmentKeys,
    };
  }

  boolean(ns: string, flagKey: string, entityId: string, context: Record<string, string>): Outcome {
    const r = this.engine(ns).evaluate_boolean({ flag_key: flagKey, entity_id: entityId, context });
    if (r.status !== 'success' || !r.result) return { kind: 'error', message: r.errorMessage ?? 'failure' };
    return { kind: 'boolean', enabled: r.result.enabled === true, reason: r.result.reason, segmentKeys: r.result.segment_keys ?? [] };
  }

  private engine(ns: string): RawEngine {
    const e = this.engines.get(ns);
    if (!e) throw new Error(`oracle has no engine for namespace ${ns}`);
    return e;
  }
}
