/** Liveness state shared by the app and the server: false once a graceful shutdown begins. */
export interface Health {
  serving: boolean;
}

export function createHealth(): Health {
  return { serving: true };
}
