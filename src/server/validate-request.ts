/**
 * Checks evaluation request bodies (`/evaluate/v1/*`) and turns them into evaluator input.
 *
 * Choices (Flipt v1 does no validation here, §2.1):
 * - `flagKey` and `entityId` must be present and strings; `""` is accepted, as Flipt accepts it.
 * - `namespaceKey` is optional (absent or `""` means `default`): Flipt's own Go client drops
 *   empty strings when it encodes, and Flipt treats empty as `default`.
 * - `context` is optional (absent = `{}`); when present it is an object whose values are all
 *   strings (Flipt's `map<string,string>`): `invalid field context.<key>: must be a string`.
 * - `requestId`, `reference` optional strings. snake_case names are accepted everywhere.
 * - Batch: `requests` is required (an array, may be empty). The batch-level `reference` applies
 *   to every item; items may repeat it, but naming a different one is refused (vexil evaluates a
 *   request against exactly one snapshot; Flipt v1 mixed references here, §2.11).
 */
import type { EvaluationRequest } from '../evaluation/types.js';
import { field, invalidField, isPlainObject, optionalString } from './fields.js';

export interface ParsedEvaluationRequest {
  readonly request: EvaluationRequest;
  readonly requestId?: string;
  readonly reference?: string;
}

export interface ParsedBatchRequest {
  readonly requests: readonly ParsedEvaluationRequest[];
  readonly requestId?: string;
  /** The one reference the batch reads (batch-level, or the one its items agree on). */
  readonly reference?: string;
}

/** `prefix` + `name` labels the field in messages (`requests[3].flagKey`). */
function requiredString(obj: Readonly<Record<string, unknown>>, name: string, prefix: string): string {
  const v = field(obj, name);
  if (typeof v === 'string') return v;
  throw invalidField(`${prefix}${name}`, v === undefined ? 'is required' : 'must be a string');
}

/**
 * The prototype of request contexts: empty, itself without a prototype, so a context lookup of
 * `constructor`, `toString` or `__proto__` reads as absent (and a key `__proto__` is an ordinary
 * member). Unlike Object.create(null) objects, which V8 keeps as dictionaries, objects made from
 * it keep fast properties: cheaper to fill on every request.
 */
const CONTEXT_PROTOTYPE = Object.create(null) as object;

function parseContext(obj: Readonly<Record<string, unknown>>, prefix: string): Record<string, string> {
  const v = field(obj, 'context');
  const context = Object.create(CONTEXT_PROTOTYPE) as Record<string, string>;
  if (v === undefined) return context;
  if (!isPlainObject(v)) throw invalidField(`${prefix}context`, 'must be an object of string values');
  // JSON.parse makes plain objects: for-in sees exactly their own keys, in Object.entries' order.
  for (const key in v) {
    const value = v[key];
    if (typeof value !== 'string') throw invalidField(`${prefix}context.${key}`, 'must be a string');
    context[key] = value;
  }
  return context;
}

/**
 * @param prefix label prefix for messages of batch items (`requests[3].`).
 * @param pathNamespace the `{namespaceKey}` of `/evaluate/v1/namespaces/{namespaceKey}/variant`.
 */
export function parseEvaluationRequest(
  body: unknown,
  opts: { prefix?: string; pathNamespace?: string } = {},
): ParsedEvaluationRequest {
  const prefix = opts.prefix ?? '';
  if (!isPlainObject(body)) {
    throw invalidField(prefix === '' ? 'body' : prefix.replace(/\.$/, ''), 'must be an object');
  }
  let namespaceKey = optionalString(body, 'namespaceKey', prefix) ?? '';
  if (opts.pathNamespace !== undefined) {
    if (namespaceKey === '') namespaceKey = opts.pathNamespace;
    else if (namespaceKey !== opts.pathNamespace) {
      throw invalidField(`${prefix}namespaceKey`, `"${namespaceKey}" does not match the path's namespace "${opts.pathNamespace}"`);
    }
  }
  const flagKey = requiredString(body, 'flagKey', prefix);
  const entityId = requiredString(body, 'entityId', prefix);
  const context = parseContext(body, prefix);
  const requestId = optionalString(body, 'requestId', prefix);
  const reference = optionalString(body, 'reference', prefix);
  const request: EvaluationRequest = { namespaceKey, flagKey, entityId, context };
  if (requestId === undefined && (reference === undefined || reference === '')) return { request };
  if (reference === undefined || reference === '') return { request, requestId: requestId! };
  return requestId === undefined ? { request, reference } : { request, requestId, reference };
}

export function parseBatchRequest(body: unknown): ParsedBatchRequest {
  if (!isPlainObject(body)) throw invalidField('body', 'must be an object');
  const raw = field(body, 'requests');
  if (raw === undefined) throw invalidField('requests', 'is required');
  if (!Array.isArray(raw)) throw invalidField('requests', 'must be an array');
  const requestId = optionalString(body, 'requestId', '');
  const batchReference = optionalString(body, 'reference', '');
  const requests = raw.map((item, i) => parseEvaluationRequest(item, { prefix: `requests[${i}].` }));

  let reference = batchReference !== undefined && batchReference !== '' ? batchReference : undefined;
  for (const [i, item] of requests.entries()) {
    if (item.reference === undefined) continue;
    if (reference === undefined) reference = item.reference;
    else if (item.reference !== reference) {
      throw invalidField(
        `requests[${i}].reference`,
        `a batch reads one reference; "${item.reference}" differs from "${reference}"`,
      );
    }
  }
  return {
    requests,
    ...(requestId !== undefined ? { requestId } : {}),
    ...(reference !== undefined ? { reference } : {}),
  };
}
