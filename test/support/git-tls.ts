/**
 * A throwaway certificate authority and a server certificate for 127.0.0.1 signed by it, made
 * with the openssl CLI (async: never block a test's event loop), for HTTPS git server tests.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Teardown } from './git-repo.js';

export interface TestCertificates {
  /** PEM file of the certificate authority (what storage.git.ca_cert_path points at). */
  readonly caPath: string;
  readonly key: string;
  readonly cert: string;
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`openssl ${args[0]}: ${err}`))));
  });
}

export async function makeTestCertificates(t: Teardown): Promise<TestCertificates> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-days', '2', '-subj', '/CN=vexil test CA', '-keyout', 'ca.key', '-out', 'ca.pem'], dir);
  await openssl(['req', ...ec, '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr'], dir);
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n',
  );
  const sign = ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2'];
  await openssl([...sign, '-extfile', 'ext.cnf', '-out', 'server.pem'], dir);
  return { caPath: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key'), 'utf8'), cert: readFileSync(join(dir, 'server.pem'), 'utf8') };
}
