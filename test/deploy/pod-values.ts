/**
 * The renderings of deploy/kubernetes/ the tests cover, and the values a cluster would supply to
 * the pod (Secret contents, the projected token, the cluster CA), as test values.
 */
import { join } from 'node:path';
import { renderKustomization, type K8sObject } from './kustomize-render.js';
import { REPO, type PodFiles } from './local-pod.js';

export const KUSTOMIZE_ROOT = join(REPO, 'deploy/kubernetes');
export const RENDERINGS = ['base', 'overlays/single-sqlite', 'overlays/replicas-postgres'] as const;

export function render(name: string): K8sObject[] {
  return renderKustomization(join(KUSTOMIZE_ROOT, name));
}

/** Test values by `<Secret>/<key>`; the PEM is a placeholder the config loader does not open. */
export const TEST_FILES: PodFiles = {
  secrets: {
    'vexil-git/username': 'flags-reader',
    'vexil-git/password': 'git-password-for-tests',
    'vexil-webhook/secret': 'webhook-secret-for-tests',
    'vexil-database/url': 'postgres://vexil:db-password@127.0.0.1:5432/vexil',
  },
  serviceAccountToken: 'projected-token-for-tests',
  clusterCaPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
};
