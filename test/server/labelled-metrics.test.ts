import t from 'tap';
import { Counter, Histogram, Registry } from 'prom-client';
import { LabelledCounter, LabelledHistogram } from '../../src/server/pipeline/labelled-metrics.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The same observations into prom-client's own metrics and into ours, in two registries. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const spec = { name: 'x_duration_seconds', help: 'Latency "by" route\\status.', labelNames: ['method', 'route', 'status'] as const };
  const h1 = new Histogram({ ...spec, buckets: BUCKETS, registers: [theirs] });
  const h2 = new LabelledHistogram({ ...spec, buckets: BUCKETS, registers: [ours] });
  const cspec = { name: 'x_total', help: 'Evaluations.', labelNames: ['namespace', 'flag'] as const };
  const c1 = new Counter({ ...cspec, registers: [theirs] });
  const c2 = new LabelledCounter({ ...cspec, registers: [ours] });
  return {
    theirs,
    ours,
    observe(labels: { method: string; route: string; status: string }, v: number) {
      h1.labels(labels).observe(v);
      h2.series(labels).observe(v);
    },
    inc(labels: { namespace: string; flag: string }) {
      c1.labels(labels).inc();
      c2.series(labels).inc();
    },
  };
}

t.test('exports exactly what prom-client exports for the same observations', async (t) => {
  const p = pair();
  const values = [0, 0.0005, 0.00051, 0.0012, 0.003, 0.2, 1, 2.5, 2.6, 30, 1e-9];
  for (const [i, v] of values.entries()) {
    p.observe({ method: 'POST', route: '/evaluate/v1/variant', status: '200' }, v);
    if (i % 3 === 0) p.observe({ method: 'GET', route: 'unmatched', status: '404' }, v / 3);
    p.inc({ namespace: 'default', flag: i % 2 === 0 ? 'a' : 'b "quoted" \\ \n' });
  }
  t.equal(await p.ours.metrics(), await p.theirs.metrics(), 'text exposition');
  t.same(await p.ours.getMetricsAsJSON(), await p.theirs.getMetricsAsJSON(), 'JSON form');
  const name = 'x_duration_seconds';
  t.equal(await p.ours.getSingleMetricAsString(name), await p.theirs.getSingleMetricAsString(name));
  t.match(await p.ours.metrics(), /x_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/evaluate\/v1\/variant",status="200"\} 11/);
});

t.test('a series kept by the caller keeps counting; reset empties it in place', async (t) => {
  const registry = new Registry();
  const h = new LabelledHistogram({ name: 'h', help: 'h', labelNames: ['a'], buckets: [1], registers: [registry] });
  const c = new LabelledCounter({ name: 'c', help: 'c', labelNames: ['a'], registers: [registry] });
  const hs = h.series({ a: 'x' });
  const cs = c.series({ a: 'x' });
  t.equal(h.series({ a: 'x' }), hs, 'one series per label set');
  hs.observe(0.5);
  cs.inc();
  cs.inc();
  t.match(await registry.metrics(), /c\{a="x"\} 2/);
  registry.resetMetrics();
  t.notMatch(await registry.metrics(), /a="x"/, 'nothing listed after a reset');
  hs.observe(2);
  cs.inc();
  const text = await registry.metrics();
  t.match(text, /h_bucket\{le="1",a="x"\} 0/);
  t.match(text, /h_count\{a="x"\} 1/);
  t.match(text, /c\{a="x"\} 1/);
});

t.test('refuses label sets that do not match the label names, and non-finite values', async (t) => {
  const registry = new Registry();
  const h = new LabelledHistogram({ name: 'h', help: 'h', labelNames: ['a'], buckets: [1], registers: [registry] });
  t.throws(() => h.series({} as { a: string }));
  t.throws(() => h.series({ a: 'x', b: 'y' } as { a: string }));
  t.throws(() => h.series({ a: 'x' }).observe(Number.NaN));
  t.throws(() => new LabelledHistogram({ name: 'h', help: 'h', labelNames: ['le'], buckets: [1], registers: [] }));
  t.throws(() => new LabelledCounter({ name: 'h', help: 'h', labelNames: ['a'], registers: [registry] }), 'a name registers once');
});
