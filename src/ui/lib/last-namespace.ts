/**
 * The namespace a person last browsed, remembered in this browser (localStorage) so that "Flags"
 * and the home address open its flags; and which namespace home opens when the remembered one does
 * not exist on the reference viewed (`default` when it exists, else the first). Not a secret: a
 * namespace key. Pure apart from the storage handed in.
 */
const KEY = 'vexil.namespace';

export interface NamespaceStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export function rememberNamespace(storage: NamespaceStorage, namespace: string): void {
  try {
    storage.setItem(KEY, namespace);
  } catch {
    // Storage full or refused (private mode): home then opens `default`.
  }
}

export function lastNamespace(storage: NamespaceStorage): string | undefined {
  try {
    const v = storage.getItem(KEY);
    return v === null || v === '' ? undefined : v;
  } catch {
    return undefined;
  }
}

/** The namespace home opens among `available` (in the server's order); undefined when there is none. */
export function homeNamespace(remembered: string | undefined, available: readonly string[]): string | undefined {
  if (remembered !== undefined && available.includes(remembered)) return remembered;
  if (available.includes('default')) return 'default';
  return available[0];
}
