/**
 * The one operation `vexil comment` performs on a code host: find the comment that carries our
 * hidden marker among a pull request's comments and replace its body, or create it when there is
 * none. A host is a ReviewThread (list, create, update); github.ts and gitlab.ts are the two.
 * The marker must open the body (ours always does). Listing is bounded (MAX_PAGES pages of 100), so a thread with more comments than that gets a
 * new comment rather than an endless scan.
 */

export interface ThreadComment {
  readonly id: string;
  readonly body: string;
}

export interface ReviewThread {
  /** Every comment, page after page, oldest first as both hosts list them by default. */
  list(): AsyncIterable<ThreadComment>;
  create(body: string): Promise<ThreadComment>;
  update(id: string, body: string): Promise<ThreadComment>;
}

/** Pages of 100 comments read at most while looking for our comment. */
export const MAX_PAGES = 100;

export type UpsertResult = { readonly action: 'created' | 'updated' | 'unchanged'; readonly id: string };

export async function upsertComment(thread: ReviewThread, marker: string, body: string): Promise<UpsertResult> {
  for await (const c of thread.list()) {
    // At the start only: a reply that quotes or pastes our comment is someone else's to keep.
    if (!c.body.startsWith(marker)) continue;
    if (c.body === body) return { action: 'unchanged', id: c.id };
    const updated = await thread.update(c.id, body);
    return { action: 'updated', id: updated.id };
  }
  const created = await thread.create(body);
  return { action: 'created', id: created.id };
}
