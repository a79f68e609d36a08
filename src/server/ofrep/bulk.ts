/**
 * OFREP bulk evaluation:
 * `{"flags": [<evaluated flag or flag failure>...], "metadata": {"version", "flagSetId"}[, "eventStreams": [...]]}`.
 *
 * `metadata` is the flag set's (OFREP's bulkEvaluationSuccess.metadata): the revision evaluated
 * and the namespace, as every flag's own metadata carries them too (answer.ts), so a telemetry
 * hook finds them whichever it reads. `eventStreams` (ofrep/event-streams.ts) tells the provider
 * where to listen for changes; the route leaves it out when streaming is off.
 *
 * Which flags: those `context.flags` names, in its order; without it, as Flipt does, every
 * boolean flag and every enabled variant flag of the namespace (in key order), so a client that
 * loads "everything" gets the flags it can act on.
 *
 * A named flag that does not exist is reported in its place as
 * `{"key", "errorCode": "FLAG_NOT_FOUND", "errorDetails"}`, the per-flag failure the OFREP spec
 * allows in a bulk answer; the other flags are still answered. (Flipt fails the whole request
 * with 404 on the first missing flag, so one stale key in a client's list costs it every flag.)
 * A namespace that does not exist fails the request, nothing in it can be evaluated: 400 GENERAL,
 * as an unknown reference (OFREP's bulk endpoint has no 404: errors.ts notAboutTheFlag).
 */
import { Code, VexilError, notFound } from '../../errors.js';
import { goQuote } from '../../evaluation/lookup.js';
import type { Namespace, Snapshot } from '../../model/snapshot.js';
import type { ServerMetrics } from '../pipeline/metrics.js';
import { notAboutTheFlag } from './errors.js';
import { evaluatedFlagText, flagSetMetadataText } from './answer.js';
import type { OfrepBulkRequest } from './request.js';

/** The namespace the bulk request reads; 400 GENERAL when it does not exist. */
export function bulkNamespace(snapshot: Snapshot, namespaceKey: string): Namespace {
  const ns = snapshot.namespaces.get(namespaceKey);
  if (ns === undefined) throw notAboutTheFlag(notFound(`namespace ${goQuote(namespaceKey)} not found`));
  return ns;
}

/** The keys a bulk request evaluates. */
export function bulkKeys(ns: Namespace, flags: readonly string[] | undefined): readonly string[] {
  if (flags !== undefined) return flags;
  const keys: string[] = [];
  for (const flag of ns.flags.values()) {
    if (flag.type === 'BOOLEAN_FLAG_TYPE' || flag.enabled) keys.push(flag.key);
  }
  return keys;
}

/** The bulk answer's JSON text; `eventStreams`: the array's JSON text (event-streams.ts), or undefined to leave it out. */
export function bulkText(snapshot: Snapshot, ns: Namespace, req: OfrepBulkRequest, metrics: ServerMetrics, eventStreams?: string): string {
  const items: string[] = [];
  for (const key of bulkKeys(ns, req.flags)) {
    try {
      items.push(evaluatedFlagText(snapshot, ns.key, key, req, metrics));
    } catch (err) {
      if (!(err instanceof VexilError) || err.code !== Code.NotFound) throw err;
      const failure = JSON.stringify({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: err.message });
      items.push(`${failure.slice(0, -1)},"metadata":{${flagSetMetadataText(snapshot, ns.key)}}}`);
    }
  }
  const streams = eventStreams === undefined ? '' : `,"eventStreams":${eventStreams}`;
  return `{"flags":[${items.join(',')}],"metadata":{${flagSetMetadataText(snapshot, ns.key)}}${streams}}`;
}
