/**
 * The package version, read from package.json so there is one place to bump it. Both
 * `src/version.ts` and the built `dist/version.js` sit one level below the package root.
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

export const VERSION: string = readVersion();
