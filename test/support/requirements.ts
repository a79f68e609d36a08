/**
 * What a test that needs an outside program (git, PostgreSQL, docker-registry) does when it is
 * missing: outside CI it skips, saying why and how to get it; under CI it fails, since CI runs as
 * root, where scripts/test-setup.sh installs every one of them: a missing one there is a broken
 * setup, not a reason to skip. Each requirement's check (`...UnavailableReason()`) lives next to
 * its helper in test/support/ and returns the reason, or undefined when the program is there.
 */
import type { Test } from 'tap';

/** Values of CI that mean "not CI" (compared trimmed and in lower case); any other non-empty value is CI. */
const NOT_CI = new Set(['0', 'false', 'no', 'off']);

/** True when CI is set to a truthy value (`1`, `true`, `yes`, ...); false when unset, empty, `0`, `false`, `no` or `off`. */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && !NOT_CI.has(value);
}

/**
 * The `skip` option of one test needing something unavailable for `reason` (undefined when
 * available): the reason outside CI; false under CI, where the test runs (and reportMissing fails it).
 */
export function skipUnlessCI(reason: string | undefined, env: NodeJS.ProcessEnv = process.env): string | false {
  return reason !== undefined && !isCI(env) ? reason : false;
}

/**
 * Reports that `what` is missing for `reason`: under CI a failure, otherwise one skipped test
 * carrying the reason. For a file that declares its tests only when the requirement is met.
 */
export function reportMissing(t: Pick<Test, 'fail' | 'skip'>, what: string, reason: string): void {
  if (isCI()) t.fail(`${what} is required under CI (CI=${process.env.CI}): ${reason}`);
  else void t.skip(`${what} tests skipped: ${reason}`, () => undefined);
}

type Root = Pick<Test, 'test' | 'fail' | 'skip'>;

/**
 * The root to declare a file's tests on when every one of them needs `what`
 * (`const t = testsNeeding(tap, 'git', gitUnavailableReason())` in place of `import t from 'tap'`):
 * - available: the root itself;
 * - missing under CI: the root itself, after a failure with the reason (the tests then run and fail);
 * - missing elsewhere: a view of the root whose `test()` declares each test skipped with the
 *   reason; every other member is the root's own.
 */
export function testsNeeding<T extends Root>(root: T, what: string, reason: string | undefined): T {
  if (reason === undefined) return root;
  if (isCI()) {
    reportMissing(root, what, reason);
    return root;
  }
  const skip = `${what} tests skipped: ${reason}`;
  const test = (...args: unknown[]) => (root.test as (...a: unknown[]) => unknown)(...withSkip(args, skip));
  return new Proxy(root, {
    get(target, property) {
      if (property === 'test') return test;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** tap's test(name?, options?, fn?) arguments with `skip` set in the options (added when absent). */
function withSkip(args: unknown[], skip: string): unknown[] {
  const at = args.findIndex((a) => typeof a === 'object' && a !== null);
  if (at >= 0) return args.map((a, i) => (i === at ? { ...(a as object), skip } : a));
  const fn = args.findIndex((a) => typeof a === 'function');
  const insertAt = fn >= 0 ? fn : args.length;
  return [...args.slice(0, insertAt), { skip }, ...args.slice(insertAt)];
}
