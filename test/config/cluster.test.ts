/**
 * `cluster.coordination.*`: defaults (off), durations in ms, and the rules the schema cannot say
 * (a URL for the engine chosen, a polled backend, positive durations), each refused with its path.
 */
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig({ env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => p.path);
    throw err;
  }
  return [];
};

const git = { VEXIL_STORAGE_TYPE: 'git', VEXIL_STORAGE_GIT_REPOSITORY: 'https://example.com/flags.git' };

t.test('off by default; durations in ms', async (t) => {
  t.same(loadConfig({ env: {} }).cluster.coordination, { type: 'none', postgres: {}, redis: {}, backstop_interval: 300_000 });
  const c = loadConfig({
    env: { ...git, VEXIL_CLUSTER_COORDINATION_TYPE: 'redis', VEXIL_CLUSTER_COORDINATION_REDIS_URL: 'redis://127.0.0.1:6379', VEXIL_CLUSTER_COORDINATION_MAX_LAG: '2m', VEXIL_CLUSTER_COORDINATION_BACKSTOP_INTERVAL: '1m' },
  }).cluster.coordination;
  t.same(c, { type: 'redis', postgres: {}, redis: { url: 'redis://127.0.0.1:6379' }, backstop_interval: 60_000, max_lag: 120_000 });
});

t.test('the chosen engine needs its URL', async (t) => {
  t.same(problems({ ...git, VEXIL_CLUSTER_COORDINATION_TYPE: 'postgres' }), ['cluster.coordination.postgres.url']);
  t.same(problems({ ...git, VEXIL_CLUSTER_COORDINATION_TYPE: 'redis', VEXIL_CLUSTER_COORDINATION_POSTGRES_URL: 'postgres://x/y' }), ['cluster.coordination.redis.url']);
});

t.test('a local folder is watched by each replica: coordination refused', async (t) => {
  t.same(problems({ VEXIL_CLUSTER_COORDINATION_TYPE: 'redis', VEXIL_CLUSTER_COORDINATION_REDIS_URL: 'redis://127.0.0.1:6379' }), ['cluster.coordination.type']);
});

t.test('durations must be positive; an unknown type is refused', async (t) => {
  t.same(problems({ ...git, VEXIL_CLUSTER_COORDINATION_BACKSTOP_INTERVAL: '0s', VEXIL_CLUSTER_COORDINATION_MAX_LAG: '0s' }), [
    'cluster.coordination.backstop_interval',
    'cluster.coordination.max_lag',
  ]);
  t.same(problems({ ...git, VEXIL_CLUSTER_COORDINATION_TYPE: 'etcd' }), ['cluster.coordination.type']);
});
