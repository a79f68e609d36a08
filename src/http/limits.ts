/**
 * The limits on what one request may carry, in one place (docs/api/README.md, "Request limits", lists
 * them). Each bounds the work and memory a single request can cause; none is reached by a
 * request a Flipt client would normally send.
 */

/** A request body's size in bytes (1 MiB); beyond it: 413, the rest of the body is not read. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A push webhook's body (`POST /hooks/...`): 4 MiB. Git hosts list at most 20 commits with their
 * changed paths in a push payload, a few KiB to some hundred; beyond it: 413, the rest is not read.
 */
export const MAX_WEBHOOK_BODY_BYTES = 4 * 1024 * 1024;

/** Nesting depth of a JSON body; deeper: 400 (everything that walks the value recurses). */
export const MAX_JSON_DEPTH = 64;

/**
 * An evaluation context's values and keys, in UTF-8 bytes, and its number of keys. A context value
 * is matched by constraints (string comparisons, number and date parsing), so its length bounds
 * the work of every constraint on it; 64 KiB is far above any identifier, e-mail or JSON blob a
 * context usually holds. Beyond any of them: 400 `invalid field context.<key>: ...`
 * (`requests[<i>].context.<key>` in a batch).
 */
export const MAX_CONTEXT_VALUE_BYTES = 64 * 1024;
export const MAX_CONTEXT_KEY_BYTES = 1024;
export const MAX_CONTEXT_KEYS = 1000;

/**
 * Flags an OFREP bulk request may name in `context.flags` (repeated keys count once). Each named
 * flag adds an item to the answer, so the bound keeps a 1 MiB request from asking for an answer
 * many times its size; beyond it: 400 `invalid field context.flags: ...`.
 */
export const MAX_BULK_FLAGS = 10_000;
