/**
 * The script bench/ui.ts installs in every page before the page's own scripts run
 * (`BrowserContext.addInitScript`). It records, on the page's own clock (`performance.now()`,
 * milliseconds since navigation start), into `window.__uiProbe`:
 *
 * - `rowsAt`: when the flags table has its first row in the DOM and the search field exists
 *   (a MutationObserver on the whole document, disconnected once seen);
 * - `rowsPaintedAt`: when the frame showing them was produced (see `afterNextPaint`);
 * - `keys`: per `input` event of `#flag-search`, the keydown's time (`event.timeStamp`, when the
 *   browser received the key, so a busy main thread counts), and `paintedAt`: the end of the first
 *   frame in which `#flag-count` reads `expect` (set by the harness before each key: the count the
 *   filter must show, so a frame painted before the page re-rendered is never taken);
 * - `longTasks`: main-thread tasks over 50 ms (start, duration).
 *
 * Kept as plain browser JavaScript in a string: bench/ is compiled without the DOM library.
 */
export const UI_PROBE = String.raw`(() => {
  const probe = { rowsAt: null, rowsPaintedAt: null, keys: [], expect: null, lastKeyDownAt: null, longTasks: [] };
  Object.defineProperty(window, '__uiProbe', { value: probe });
  // requestAnimationFrame runs just before a frame is rendered; a message posted from it is
  // handled once that frame is done, so its time is when the frame's pixels were produced.
  const afterFrame = (cb) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => cb(performance.now());
    ch.port2.postMessage(null);
  };
  const afterNextPaint = (cb) => requestAnimationFrame(() => afterFrame(cb));
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.longTasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  const mo = new MutationObserver(() => {
    if (probe.rowsAt !== null) return;
    if (document.querySelector('table.list tbody tr') !== null && document.getElementById('flag-search') !== null) {
      probe.rowsAt = performance.now();
      mo.disconnect();
      afterNextPaint((t) => { probe.rowsPaintedAt = t; });
    }
  });
  mo.observe(document, { childList: true, subtree: true });
  addEventListener('keydown', (e) => { probe.lastKeyDownAt = e.timeStamp; }, true);
  addEventListener('input', (e) => {
    const target = e.target;
    if (!(target instanceof HTMLInputElement) || target.id !== 'flag-search') return;
    const keyDownAt = probe.lastKeyDownAt !== null && probe.lastKeyDownAt <= e.timeStamp ? probe.lastKeyDownAt : e.timeStamp;
    const rec = { value: target.value, keyDownAt, inputAt: e.timeStamp, paintedAt: null, shown: null, frames: 0 };
    probe.keys.push(rec);
    const expect = probe.expect;
    const poll = () => requestAnimationFrame(() => {
      rec.frames++;
      const shown = document.getElementById('flag-count')?.textContent ?? '';
      if (expect === null || shown.includes(expect) || rec.frames >= 300) {
        rec.shown = shown;
        afterFrame((t) => { rec.paintedAt = t; });
      } else poll();
    });
    poll();
  }, true);
})();`;

/** What the probe holds (see above). */
export interface UiProbeState {
  rowsAt: number | null;
  rowsPaintedAt: number | null;
  keys: Array<{ value: string; keyDownAt: number; inputAt: number; paintedAt: number | null; shown: string | null; frames: number }>;
  expect: string | null;
  longTasks: Array<[number, number]>;
}
