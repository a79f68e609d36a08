/**
 * A counter and a histogram for the per-request metrics, registered in a prom-client Registry
 * like its own metrics and exported in the same form (the Registry formats both), but observed
 * through series objects held by the caller: one add per bucket, no label hashing or label
 * validation per request. prom-client's labelled children (`metric.labels(...)`) still hash and
 * validate the label object on every observe()/inc(), which showed in the evaluation profile.
 *
 * The label names are fixed at construction; a series is created once per label set, in the
 * order the caller first uses it (the order prom-client would list them).
 */
import type { Registry } from 'prom-client';

type Labels<N extends string> = Readonly<Record<N, string>>;

interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  exemplar?: null | undefined;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

interface MetricOptions<N extends string> {
  name: string;
  help: string;
  labelNames: readonly N[];
  registers: readonly Registry[];
}

function checkLabels(names: readonly string[], labels: Readonly<Record<string, string>>): Record<string, string> {
  const copy: Record<string, string> = {};
  for (const name of names) {
    const v = labels[name];
    if (typeof v !== 'string') throw new Error(`label "${name}" missing`);
    copy[name] = v;
  }
  if (Object.keys(labels).length !== names.length) throw new Error(`labels must be exactly: ${names.join(', ')}`);
  return copy;
}

/**
 * What both metrics share: name, help, label names, registration, and their series, one per
 * distinct set of label values (created by `make` on first use, listed in that order).
 */
abstract class LabelledMetric<N extends string, S> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  readonly labelNames: readonly N[];
  readonly #series = new Map<string, S>();

  constructor(opts: MetricOptions<N>) {
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = [...opts.labelNames];
  }

  protected register(registers: readonly Registry[]): void {
    for (const r of registers) r.registerMetric(this as never);
  }

  /** The series of one label set (keep it: the lookup is the costly part). */
  protected seriesFor(labels: Labels<N>, make: (labels: Record<string, string>) => S): S {
    const copy = checkLabels(this.labelNames, labels);
    const key = JSON.stringify(this.labelNames.map((n) => copy[n]));
    let s = this.#series.get(key);
    if (s === undefined) {
      s = make(copy);
      this.#series.set(key, s);
    }
    return s;
  }

  protected allSeries(): IterableIterator<S> {
    return this.#series.values();
  }
}

export interface CounterSeries {
  inc(): void;
}

class CounterSeriesImpl implements CounterSeries {
  value = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(): void {
    this.value++;
  }
}

export class LabelledCounter<N extends string> extends LabelledMetric<N, CounterSeriesImpl> {
  readonly type = 'counter' as const;

  constructor(opts: MetricOptions<N>) {
    super(opts);
    this.register(opts.registers);
  }

  /** The series of one label set (keep it: the lookup is the costly part). */
  series(labels: Labels<N>): CounterSeries {
    return this.seriesFor(labels, (copy) => new CounterSeriesImpl(copy));
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    // A series only exists once it was counted (prom-client lists a label set from its first inc).
    for (const s of this.allSeries()) if (s.value > 0) values.push({ value: s.value, labels: { ...s.labels } });
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }

  /** Zeroes every series in place (callers keep theirs); a zero series is not listed. */
  reset(): void {
    for (const s of this.allSeries()) s.value = 0;
  }
}

export interface HistogramSeries {
  observe(value: number): void;
}

class HistogramSeriesImpl implements HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

export class LabelledHistogram<N extends string> extends LabelledMetric<N, HistogramSeriesImpl> {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];

  constructor(opts: MetricOptions<N> & { buckets: readonly number[] }) {
    if ((opts.labelNames as readonly string[]).includes('le')) throw new Error('le is a reserved label keyword');
    super(opts);
    this.buckets = [...opts.buckets].sort((a, b) => a - b);
    this.register(opts.registers);
  }

  /** The series of one label set (keep it: the lookup is the costly part). */
  series(labels: Labels<N>): HistogramSeries {
    return this.seriesFor(labels, (copy) => new HistogramSeriesImpl(copy, this.buckets));
  }

  /** What the Registry formats: cumulative buckets, +Inf, _sum and _count per label set. */
  async getForPromString(): Promise<MetricData> {
    const values: MetricValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.allSeries()) {
      if (s.count === 0) continue;
      let acc = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: this.buckets[i]! }, sharedLabels: s.labels, value: acc, metricName: bucketName, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' } as Record<string, string>, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same with each value's labels complete (prom-client's `get()` shape). */
  async get(): Promise<MetricData> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...(sharedLabels ?? {}) } }));
    return data;
  }

  /** Zeroes every series in place (callers keep theirs); an empty series is not listed. */
  reset(): void {
    for (const s of this.allSeries()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
