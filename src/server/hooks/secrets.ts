/**
 * The webhook secrets of `webhooks.*`, read once at start: written inline (the config file, a
 * `${VAR}` placeholder or `VEXIL_WEBHOOKS_...`) or read from `*_file` (surrounding whitespace,
 * such as the newline a secret file ends with, is not part of the secret). A provider without one
 * has no route. A file that cannot be read or is empty stops the start with the key and the path,
 * never the content. The secrets stay in this process's memory as bytes; nothing logs them.
 */
import { readFileSync } from 'node:fs';
import type { WebhooksConfig } from '../../config/types.js';

export type HookProvider = 'github' | 'gitlab' | 'gitea' | 'generic' | 'registry';

export type WebhookSecrets = Partial<Record<HookProvider, Buffer>>;

/** The config key holding each provider's secret. */
export const SECRET_KEYS: Readonly<Record<HookProvider, 'secret' | 'token'>> = {
  github: 'secret',
  gitlab: 'token',
  gitea: 'secret',
  generic: 'secret',
  registry: 'token',
};

export function readWebhookSecrets(config: WebhooksConfig): WebhookSecrets {
  const out: WebhookSecrets = {};
  for (const provider of Object.keys(SECRET_KEYS) as HookProvider[]) {
    const key = SECRET_KEYS[provider];
    const section = config[provider] as Partial<Record<string, string>>;
    const inline = section[key];
    const file = section[`${key}_file`];
    if (inline !== undefined) {
      out[provider] = Buffer.from(inline, 'utf8');
    } else if (file !== undefined) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8').trim();
      } catch (err) {
        const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        throw new Error(`webhooks.${provider}.${key}_file: cannot read ${file}: ${reason}`);
      }
      if (text === '') throw new Error(`webhooks.${provider}.${key}_file: ${file} is empty`);
      out[provider] = Buffer.from(text, 'utf8');
    }
  }
  return out;
}
