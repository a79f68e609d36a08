/**
 * Lifecycle checks over a flag's `metadata` map (Flipt's free-form metadata, document version 1.3):
 * `owner`, `expires` (a date `YYYY-MM-DD` or an RFC 3339 date-time) and
 * `lifecycle: temporary|permanent`. `flag.expired`: a temporary flag whose `expires` has passed;
 * `flag.expires.invalid`: an `expires` that is not a date, so no expiry can ever be reported.
 * Flags marked `permanent`, or without `lifecycle`, are not expired by their date (only
 * `temporary` is a promise to remove the flag).
 *
 * Pure: "today" is an input (the CLI passes its clock), never read here. A date expires at the end
 * of that day in UTC (a flag with `expires: 2026-11-27` is past it from 2026-11-28), a date-time
 * at that instant. Reports name a place in the state model like the other semantic checks
 * (checks/*.ts); locate-flags.ts gives them a file, line and column.
 */
import type { Flag, Snapshot } from '../../model/snapshot.js';
import type { Severity } from '../../model/problem.js';
import { RULES } from '../rules.js';

/** The metadata keys the lifecycle reads. */
export const LIFECYCLE_KEYS = { owner: 'owner', expires: 'expires', lifecycle: 'lifecycle' } as const;

export interface LifecycleReport {
  readonly rule: 'flag.expired' | 'flag.expires.invalid';
  readonly severity: Severity;
  readonly namespace: string;
  /** The flag's `metadata.expires` key. */
  readonly place: { readonly kind: 'flag'; readonly flag: string; readonly field: 'metadata'; readonly key: 'expires' };
  readonly message: string;
  readonly hint: string;
}

/** What a flag's metadata says about its lifecycle (absent keys and non-string values as undefined). */
export interface FlagLifecycle {
  readonly owner?: string;
  readonly lifecycle?: string;
  /** As written. */
  readonly expires?: string;
}

export function lifecycleOf(flag: Flag): FlagLifecycle {
  const m = flag.metadata;
  if (m === undefined) return {};
  const text = (k: string): string | undefined => {
    const v = Object.hasOwn(m, k) ? m[k] : undefined;
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
  };
  const owner = text(LIFECYCLE_KEYS.owner);
  const lifecycle = text(LIFECYCLE_KEYS.lifecycle);
  const expires = text(LIFECYCLE_KEYS.expires);
  return { ...(owner !== undefined ? { owner } : {}), ...(lifecycle !== undefined ? { lifecycle } : {}), ...(expires !== undefined ? { expires } : {}) };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The first instant at which `expires` has passed (ms since the epoch): the start of the next UTC
 * day for a date, the instant itself for a date-time; undefined when it is neither (or names a
 * day that does not exist, such as 2026-02-30).
 */
export function expiryInstant(expires: string): number | undefined {
  const d = DATE.exec(expires);
  if (d !== null) {
    const [y, mo, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    if (!realDay(y, mo, day)) return undefined;
    return Date.UTC(y, mo - 1, day + 1);
  }
  const t = DATE_TIME.exec(expires);
  if (t === null) return undefined;
  const [y, mo, day, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(t[i])) as [number, number, number, number, number, number];
  if (!realDay(y, mo, day) || h > 23 || mi > 59 || s > 60) return undefined;
  const ms = Date.parse(expires.replace(' ', 'T').toUpperCase());
  return Number.isFinite(ms) ? ms : undefined;
}

function realDay(y: number, mo: number, day: number): boolean {
  if (mo < 1 || mo > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** Whether a flag is temporary and past its `expires` at `today`. */
export function isExpired(flag: Flag, today: Date): boolean {
  const l = lifecycleOf(flag);
  if (l.lifecycle !== 'temporary' || l.expires === undefined) return false;
  const at = expiryInstant(l.expires);
  return at !== undefined && today.getTime() >= at;
}

/** The lifecycle reports of every flag of the snapshot, in namespace then flag order. */
export function lifecycleChecks(snapshot: Snapshot, today: Date): LifecycleReport[] {
  const out: LifecycleReport[] = [];
  for (const ns of snapshot.namespaces.values()) {
    for (const flag of ns.flags.values()) {
      const l = lifecycleOf(flag);
      if (l.expires === undefined) continue;
      const place = { kind: 'flag', flag: flag.key, field: 'metadata', key: 'expires' } as const;
      const at = expiryInstant(l.expires);
      if (at === undefined) {
        out.push({ rule: 'flag.expires.invalid', severity: RULES['flag.expires.invalid'].severity, namespace: ns.key, place,
          message: `flag \`${flag.key}\` has \`expires: ${l.expires}\`, which is not a date (YYYY-MM-DD) or an RFC 3339 date-time: its expiry is never checked`,
          hint: RULES['flag.expires.invalid'].hint });
        continue;
      }
      if (l.lifecycle !== 'temporary' || today.getTime() < at) continue;
      const owner = l.owner !== undefined ? ` (owner ${l.owner})` : '';
      out.push({ rule: 'flag.expired', severity: RULES['flag.expired'].severity, namespace: ns.key, place,
        message: `temporary flag \`${flag.key}\`${owner} expired on ${l.expires}`,
        hint: RULES['flag.expired'].hint });
    }
  }
  return out;
}
