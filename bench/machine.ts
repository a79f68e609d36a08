/** What the figures were measured on: they only compare within one machine and one run. */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  date: string;
  nproc: number;
  cpu: string;
  memGiB: number;
  node: string;
  loadAvg: string;
}

export function machineInfo(): MachineInfo {
  let cpu = 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: leave it unknown
  }
  return {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    cpu,
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    loadAvg: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
}

export function machineMarkdown(m: MachineInfo): string {
  return `${m.date} · ${m.nproc} CPUs (nproc) · ${m.cpu} · ${m.memGiB} GiB · Node ${m.node} · load average at start ${m.loadAvg}`;
}
