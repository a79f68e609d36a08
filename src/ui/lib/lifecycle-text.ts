/**
 * What a flag's metadata says about its lifecycle, worded for the flag page: `owner`, `lifecycle`
 * (temporary | permanent) and `expires` (a date `YYYY-MM-DD` or an RFC 3339 date-time), read the
 * way the `flag.expired` check reads them (state/checks/lifecycle.ts): a date runs out at the end of
 * that day in UTC, a date-time at that instant. Pure: `now` comes in.
 */

export interface LifecycleView {
  readonly owner?: string;
  readonly lifecycle?: string;
  readonly expires?: string;
  /** `expired today`, `expired 1 day ago`, `expired N days ago`; absent when not past or not a date. */
  readonly expired?: string;
}

const DAY_MS = 86_400_000;

/** The instant `expires` runs out at (epoch ms), or undefined when it is neither a date nor a date-time. */
export function expiryInstant(expires: string): number | undefined {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(expires);
  if (date !== null) {
    const start = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    const check = new Date(start);
    // 2026-02-31 is not a date (Date.UTC would roll it over into March).
    if (check.getUTCMonth() !== Number(date[2]) - 1 || check.getUTCDate() !== Number(date[3])) return undefined;
    return start + DAY_MS;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(expires)) return undefined;
  const t = Date.parse(expires);
  return Number.isNaN(t) ? undefined : t;
}

/** Days since `expires` ran out, worded; undefined while it has not. */
export function expiredText(expires: string, now: number): string | undefined {
  const at = expiryInstant(expires);
  if (at === undefined || now < at) return undefined;
  const days = Math.floor((now - at) / DAY_MS);
  return days === 0 ? 'expired today' : days === 1 ? 'expired 1 day ago' : `expired ${days} days ago`;
}

export function lifecycleView(metadata: Record<string, unknown> | undefined, now: number): LifecycleView {
  const text = (k: string) => {
    const v = metadata?.[k];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const owner = text('owner');
  const lifecycle = text('lifecycle');
  const expires = text('expires');
  const expired = expires !== undefined ? expiredText(expires, now) : undefined;
  return {
    ...(owner !== undefined ? { owner } : {}),
    ...(lifecycle !== undefined ? { lifecycle } : {}),
    ...(expires !== undefined ? { expires } : {}),
    ...(expired !== undefined ? { expired } : {}),
  };
}
