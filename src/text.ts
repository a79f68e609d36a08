/**
 * Trimming a repeated character from the ends of a string, in one scan from each end. The regular
 * expressions these replace (`/^\/+|\/+$/g`, `/\/+$/`, `/^_+|_+$/g`) retry the trailing run at
 * every character of a long run that does not end the string: quadratic in the run.
 */

/** `text` without `char` (one UTF-16 unit) repeated at its start and its end. */
export function trimCharacter(text: string, char: string): string {
  const code = char.charCodeAt(0);
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === code) start++;
  while (end > start && text.charCodeAt(end - 1) === code) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** `text` without `char` (one UTF-16 unit) repeated at its end. */
export function trimTrailingCharacter(text: string, char: string): string {
  const code = char.charCodeAt(0);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === code) end--;
  return end === text.length ? text : text.slice(0, end);
}
