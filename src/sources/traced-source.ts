/**
 * Spans for backend work: a Source wrapped so that each look at the backend is a span of the
 * process's tracer (the global one the tracing SDK registers; without it the calls cost a no-op).
 * The wrapper sits at the Source seam, so every backend is covered by one file and none of them
 * knows about tracing:
 *
 *   kind    refs()                      files(rev)                                 lookup / prefetch
 *   git     git.list_refs (ls-refs)     git.fetch (tree; packs it lacks)           git.lookup / git.prefetch / git.history
 *   oci     oci.resolve (manifest HEAD) oci.pull (manifest, missing layers)        -
 *   object  object.list (one listing)   object.get (the changed objects' GETs)     -
 *   local   local.list                  local.read                                 -
 *
 * Attributes: `vexil.source.kind`, `vexil.reference` and `vexil.revision` (the revision id: commit,
 * manifest digest, listing hash) where known; refs() records how many references it found. A
 * failure sets the span's status to ERROR with the message and rethrows. The snapshot build
 * (store/build-revision.ts) is the parent of the files() span, through the active context.
 */
import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { FileSet, Revision, Source } from './types.js';

const NAMES: Readonly<Record<Source['kind'], { refs: string; files: string }>> = {
  git: { refs: 'git.list_refs', files: 'git.fetch' },
  oci: { refs: 'oci.resolve', files: 'oci.pull' },
  object: { refs: 'object.list', files: 'object.get' },
  local: { refs: 'local.list', files: 'local.read' },
};

/** Runs `work` in a span named `name` (active while it runs); the span ends when it settles. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return trace.getTracer('vexil').startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

function revisionAttributes(kind: string, rev: Revision): Attributes {
  return { 'vexil.source.kind': kind, 'vexil.reference': rev.ref, 'vexil.revision': rev.id };
}

export function tracedSource(source: Source): Source {
  const kind = source.kind;
  const names = NAMES[kind];
  const traced: Source = {
    kind,
    refs: () =>
      inSpan(names.refs, { 'vexil.source.kind': kind }, async (span) => {
        const refs = await source.refs();
        span.setAttribute('vexil.references', refs.size);
        return refs;
      }),
    files: (rev: Revision) =>
      inSpan(names.files, revisionAttributes(kind, rev), async (span): Promise<FileSet> => {
        const set = await source.files(rev);
        span.setAttribute('vexil.files', set.files.length);
        return set;
      }),
  };
  const { watch, lookup, prefetch, history, cachedRefs, close } = source;
  if (watch !== undefined) traced.watch = watch.bind(source);
  if (lookup !== undefined) {
    traced.lookup = (name) => inSpan(`${kind}.lookup`, { 'vexil.source.kind': kind, 'vexil.reference': name }, () => lookup.call(source, name));
  }
  if (prefetch !== undefined) {
    traced.prefetch = (revs) =>
      inSpan(`${kind}.prefetch`, { 'vexil.source.kind': kind, 'vexil.revisions': revs.map((r) => r.id) }, () => prefetch.call(source, revs));
  }
  if (history !== undefined) {
    traced.history = (revisionId, path, limit) =>
      inSpan(`${kind}.history`, { 'vexil.source.kind': kind, 'vexil.revision': revisionId }, () => history.call(source, revisionId, path, limit));
  }
  if (cachedRefs !== undefined) traced.cachedRefs = cachedRefs.bind(source);
  if (close !== undefined) traced.close = close.bind(source);
  return traced;
}
