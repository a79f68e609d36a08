/**
 * The static client token a person pasted on the login page: kept in sessionStorage (gone when
 * the tab closes), sent as `Authorization: Bearer`, never put in a URL. Sessions from the OIDC or
 * code-host logins need none of this: their cookie travels by itself.
 */
const KEY = 'vexil.clientToken';

export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function readToken(storage: TokenStorage): string | undefined {
  const v = storage.getItem(KEY);
  return v === null || v === '' ? undefined : v;
}

export function saveToken(storage: TokenStorage, token: string): void {
  storage.setItem(KEY, token.trim());
}

export function forgetToken(storage: TokenStorage): void {
  storage.removeItem(KEY);
}
