/**
 * The flag page's "last changed" line from `GET .../flags/{key}/last-change` (pure, no DOM):
 * "Last changed in <short id> by <author>, <age>: <message's first line>", or "Not known: <reason>"
 * when the server found no such commit (outside the walk's bound, or a source without history).
 */
import { age, shortRevision } from './format.js';
import { firstLine } from './history-text.js';
import type { LastChange } from '../types.js';

/** `Name <email>` without the address (the name alone reads; an author without a name keeps the whole). */
export function authorName(author: string): string {
  const name = author.replace(/\s*<[^>]*>\s*$/, '').trim();
  return name === '' ? author.trim() : name;
}

export function lastChangeText(change: LastChange, now: number): string {
  if (change.revision === null) return `Not known: ${change.reason}`;
  const when = age(change.committedAt, now);
  const message = firstLine(change.message);
  const who = change.author === '' ? '' : ` by ${authorName(change.author)}`;
  return `Last changed in ${shortRevision(change.revision)}${who}${when === '' ? '' : `, ${when}`}${message === '' ? '' : `: ${message}`}`;
}
