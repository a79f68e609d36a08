/**
 * The Slack sink's request body: an incoming-webhook message, `text` (the notification line shown
 * where blocks are not) and `blocks` (a header line, then the diff as `vexil diff` writes it in
 * preformatted sections). Within Slack's limits: at most MAX_BLOCKS blocks, each section's text at
 * most MAX_SECTION_CHARS; a diff longer than MAX_DIFF_SECTIONS sections is summarised (its counts)
 * with a link to the UI's diff page (`/ui/diff?base=&head=` under server.public_url) instead.
 * Text from the state and the commit is escaped (&, <, >) so it cannot form Slack links or mentions.
 */
import type { AuditEvent } from '../../auth/audit.js';
import { short } from '../../diff/format-text.js';
import type { RevisionEventData } from './revision-event.js';

export const MAX_BLOCKS = 50;
export const MAX_SECTION_CHARS = 3000;
/** Sections of diff text sent in full; beyond, the summary and a link. */
export const MAX_DIFF_SECTIONS = 10;
const CHUNK = MAX_SECTION_CHARS - 8; // room for the ``` fences

type Block = { type: 'section'; text: { type: 'mrkdwn'; text: string } } | { type: 'context'; elements: Array<{ type: 'mrkdwn'; text: string }> };

/** Slack's own escaping for message text. */
export function escapeSlack(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text: text.length > MAX_SECTION_CHARS ? `${text.slice(0, MAX_SECTION_CHARS - 1)}…` : text } };
}

/** The UI diff page of `base` → `head`, when the public address is known. */
export function diffPageUrl(publicUrl: string | undefined, base: string, head: string): string | undefined {
  if (publicUrl === undefined) return undefined;
  const q = new URLSearchParams({ base, head });
  return `${publicUrl.replace(/\/+$/, '')}/ui/diff?${q.toString()}`;
}

function summaryWords(s: NonNullable<RevisionEventData['changes']>['summary']): string {
  return `flags: ${s.flagsAdded} added, ${s.flagsRemoved} removed, ${s.flagsChanged} changed; segments: ${s.segmentsAdded} added, ${s.segmentsRemoved} removed, ${s.segmentsChanged} changed`;
}

export function slackRevisionMessage(kind: 'served' | 'rejected', d: RevisionEventData, publicUrl: string | undefined): string {
  const ref = escapeSlack(d.reference);
  const rev = escapeSlack(short(d.revision));
  const blocks: Block[] = [];
  let text: string;
  if (kind === 'rejected') {
    const n = d.problemCount ?? 0;
    const still = d.previousRevision !== null ? `; still serving ${escapeSlack(short(d.previousRevision))}` : '';
    text = `vexil: ${ref} rejected ${rev} (${n} problem${n === 1 ? '' : 's'})${still}`;
    blocks.push(section(`*${text}*`));
    const lines = (d.problems ?? []).map((p) => `${p.file}:${p.line}:${p.column} ${p.severity} ${p.message} [${p.rule}]`);
    if (lines.length > 0) blocks.push(section(`\`\`\`${escapeSlack(lines.join('\n')).slice(0, CHUNK)}\`\`\``));
  } else {
    const from = d.previousRevision !== null ? ` (was ${escapeSlack(short(d.previousRevision))})` : '';
    text = `vexil: ${ref} now serves ${rev}${from}`;
    if (d.changes !== null) text += `: ${summaryWords(d.changes.summary)}`;
    blocks.push(section(`*${text}*`));
    if (d.message !== undefined && d.message !== '') blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: escapeSlack(`${d.message.split('\n')[0]!.slice(0, 300)}${d.author !== undefined ? ` (${d.author})` : ''}`) }] });
    const link = d.previousRevision !== null ? diffPageUrl(publicUrl, d.previousRevision, d.revision) : undefined;
    if (d.changes !== null) {
      const body = escapeSlack(d.changes.text);
      const chunks: string[] = [];
      for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.slice(i, i + CHUNK));
      if (chunks.length <= MAX_DIFF_SECTIONS) {
        for (const c of chunks) blocks.push(section(`\`\`\`${c}\`\`\``));
        if (link !== undefined) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `<${link}|Open the diff in vexil>` }] });
      } else {
        blocks.push(section(`The diff is too long for a message (${body.length.toLocaleString('en-US')} characters).${link !== undefined ? ` <${link}|Open it in vexil>` : ''}`));
      }
    }
  }
  return JSON.stringify({ text, blocks: blocks.slice(0, MAX_BLOCKS) });
}

export function slackAuditMessage(e: AuditEvent): string {
  const who = e.actor !== undefined ? ` by ${escapeSlack(e.actor.method)} ${escapeSlack(e.actor.authenticationId)}` : e.origin !== undefined ? ` (${e.origin})` : '';
  const text = `vexil audit: ${e.type.replace(/^io\.vexil\.auth\./, '')} of ${escapeSlack(e.subject.method)} ${escapeSlack(e.subject.authenticationId)}${who}${e.address !== undefined ? ` from ${escapeSlack(e.address)}` : ''}`;
  return JSON.stringify({ text, blocks: [section(text)] });
}
