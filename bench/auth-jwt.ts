/**
 * The JWT server of `npm run bench -- auth`: a key pair made for the run (ES256, the public key as
 * a PEM file in the run's folder, as `authentication.methods.jwt.public_key_file`) and one token
 * valid for the whole run, sent as `Authorization: JWT <token>` on every request. vexil verifies it
 * once and then answers from its verified-token cache, which is what this measures.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';

export const TARGET_JWT = 0.8;

export interface JwtBenchSetup {
  /** The `authentication:` block of the server's config. */
  yaml: string;
  authorization: string;
}

export async function prepareJwtBench(dir: string): Promise<JwtBenchSetup> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const keyFile = join(dir, 'jwt-public-key.pem');
  writeFileSync(keyFile, await exportSPKI(publicKey));
  const token = await new SignJWT({ user: { email: 'bench@example.test', name: 'bench' } })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setIssuer('https://issuer.bench.test')
    .setAudience('vexil')
    .setIssuedAt()
    .setExpirationTime('1d')
    .sign(privateKey);
  return {
    yaml: `authentication:\n  required: true\n  methods:\n    jwt:\n      enabled: true\n      public_key_file: ${keyFile}\n      validate_claims:\n        issuer: https://issuer.bench.test\n        audiences: [vexil]\n`,
    authorization: `JWT ${token}`,
  };
}
