/** The web UI's addresses: its pages (`/`, `/ui`, `/ui/...`) and their assets (`/ui/assets/...`). */
export function isUiPath(path: string): boolean {
  return path === '/' || path === '/ui' || path.startsWith('/ui/');
}
