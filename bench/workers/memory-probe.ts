/**
 * Loaded into a server under test with `node --expose-gc --import <this file>` (bench/streams.ts):
 * on SIGUSR2 it runs a full garbage collection and appends `process.memoryUsage()` as one JSON
 * line to the file named by BENCH_MEMORY_FILE, so the benchmark reads the memory the process
 * really holds, not garbage waiting for the next collection. Nothing else: vexil's own code is
 * unchanged and this costs its requests nothing.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.BENCH_MEMORY_FILE;
const gc = (globalThis as { gc?: () => void }).gc;
if (file !== undefined && gc !== undefined) {
  process.on('SIGUSR2', () => {
    gc();
    gc();
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), ...process.memoryUsage() })}\n`);
  });
}
