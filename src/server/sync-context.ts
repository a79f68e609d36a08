/**
 * An OpenTelemetry ContextManager that carries the active context through synchronous calls
 * only: `with(ctx, fn)` makes `ctx` active while `fn` runs on the stack and restores the previous
 * one when it returns; nothing follows a callback or an `await`.
 *
 * Why not the SDK's default (AsyncLocalStorage): on Node.js 20, once an AsyncLocalStorage has run,
 * async hooks fire for every async resource and promise of the process (each socket write, each
 * HTTP parser, each promise), and every request pays for it although none needs a context across
 * an await (measured with `npm run bench -- tracing`, bench/RESULTS.md). The spans vexil makes get
 * their parent in the synchronous part of their caller: a request's span is passed explicitly to
 * what records on it, and a build's source spans start in the build's first synchronous step
 * (store/build-revision.ts, sources/traced-source.ts).
 */
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export class SyncContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = target as unknown as (...args: unknown[]) => unknown;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => run.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}
