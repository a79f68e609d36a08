import type { PathSegment } from './finding.js';

/** An RFC 6901 JSON pointer (as ajv reports `instancePath`) as path segments; array indexes become numbers. */
export function pointerToPath(pointer: string): PathSegment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => {
      const seg = s.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : seg;
    });
}
