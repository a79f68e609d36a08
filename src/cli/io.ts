/** Where a command writes and which folder relative paths start from (the process, or a test's). */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly cwd: string;
}

export const processIO: CliIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  get cwd() {
    return process.cwd();
  },
};
