/**
 * Retention ages (`history.retention.max_age`): a number of days (`90d`), the unit retention is
 * usually thought in, or any Go duration (`2160h`, duration.ts), to milliseconds.
 */
import { parseDuration } from './duration.js';

const DAY_MS = 86_400_000;

/** Milliseconds of `90d` or a Go duration; throws DurationError on anything else. */
export function parseAge(input: string): number {
  const days = /^([1-9][0-9]{0,4})d$/.exec(input);
  return days !== null ? Number(days[1]) * DAY_MS : parseDuration(input);
}
