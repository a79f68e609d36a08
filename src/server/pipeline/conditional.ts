/**
 * `If-None-Match` (RFC 9110 §13.1.2) against the ETag of what would be served. vexil's snapshot
 * ETags are sent bare, without quotes, as Flipt sends them, and Flipt's clients send back exactly
 * what they got; browsers, proxies and other HTTP clients may send the quoted form, a weak `W/`
 * form, a comma-separated list, or `*`. Every one of those matches.
 */

/** True when the request's `If-None-Match` names `etag` (or is `*`): answer 304. */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text === etag) return true; // the common case: a Flipt client sending back its ETag
  // A linear scan over the list (no regular expression: the header is client-controlled).
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf(',', start);
    if (end === -1) end = text.length;
    if (sameTag(text.slice(start, end).trim(), etag)) return true;
    start = end + 1;
  }
  return false;
}

function sameTag(item: string, etag: string): boolean {
  if (item === '*' || item === etag) return true;
  // Weak comparison, as If-None-Match uses: W/"x" and "x" both name x.
  const tag = item.startsWith('W/') ? item.slice(2) : item;
  if (tag === etag) return true;
  return tag.length === etag.length + 2 && tag.startsWith('"') && tag.endsWith('"') && tag.slice(1, -1) === etag;
}
