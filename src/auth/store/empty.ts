/**
 * The store used when nothing in the configuration can create an authentication (not required,
 * no storing method enabled): `/auth/v1/tokens` answers an empty list, and no database file or
 * native module is touched for a server that does not use authentication.
 */
import type { AuthStore } from './types.js';

export function emptyAuthStore(): AuthStore {
  const refuse = async (): Promise<never> => {
    throw new Error('authentication is not in use: no method may store authentications');
  };
  return {
    kind: 'none',
    create: refuse,
    createIfMethodEmpty: refuse,
    getByHash: async () => undefined,
    getById: async () => undefined,
    list: async () => [],
    delete: async () => false,
    setExpiry: async () => undefined,
    cleanup: async () => ({ ran: true, deleted: 0, expired: [] }),
    close: async () => undefined,
  };
}
