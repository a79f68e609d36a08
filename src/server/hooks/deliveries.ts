/**
 * The delivery ids recently received, per sender, so a delivery sent twice (a sender's retry, a
 * replay of a captured request) is acted on once. Bounds: the last `capacity` ids per sender
 * (oldest forgotten first; a Map keeps insertion order), ids at most 128 characters
 * (request.ts). Only deliveries whose signature matched are recorded, so a stranger cannot fill it.
 */

/** Ids kept per sender: far more than a Git host sends between two retries of one delivery. */
export const RECENT_DELIVERIES = 4096;

export interface RecentDeliveries {
  /** True the first time `id` is seen from `sender` (then it is remembered), false after. */
  first(sender: string, id: string): boolean;
}

export function createRecentDeliveries(capacity = RECENT_DELIVERIES): RecentDeliveries {
  const bySender = new Map<string, Map<string, true>>();
  return {
    first(sender, id) {
      let seen = bySender.get(sender);
      if (seen === undefined) bySender.set(sender, (seen = new Map()));
      if (seen.has(id)) return false;
      seen.set(id, true);
      if (seen.size > capacity) seen.delete(seen.keys().next().value as string);
      return true;
    },
  };
}
