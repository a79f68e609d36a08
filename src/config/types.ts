/**
 * The resolved server configuration: the YAML file's structure (snake_case keys, Flipt's layout),
 * merged with `VEXIL_*` environment overrides and defaults, validated by
 * `schemas/config.schema.json`. Durations are Go-style strings in the file and milliseconds here.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export interface Config {
  server: {
    host: string; // default 127.0.0.1
    http_port: number; // default 8080
  };
  log: {
    level: LogLevel; // default info
    encoding: 'json' | 'console'; // default json
  };
  storage: {
    type: 'local' | 'git' | 'oci' | 'object';
    /** Refuse a state file larger than this many bytes (default 8 MiB). */
    max_file_size: number;
    local: { path: string };
  };
  authentication: AuthenticationConfig;
}

export interface CleanupConfig {
  interval: number; // ms, default 1h
  grace_period: number; // ms, default 30m
}

export interface AuthenticationConfig {
  required: boolean;
  exclude: { management: boolean; evaluation: boolean };
  session: {
    domain?: string;
    secure: boolean;
    token_lifetime: number; // ms, default 24h
    state_lifetime: number; // ms, default 10m
    csrf: { key?: string };
  };
  methods: {
    token: {
      enabled: boolean;
      cleanup: CleanupConfig;
      bootstrap: { token?: string; expiration?: number };
    };
    oidc: {
      enabled: boolean;
      cleanup: CleanupConfig;
      email_matches: string[];
      providers: Record<
        string,
        {
          issuer_url: string;
          client_id: string;
          client_secret: string;
          redirect_address: string;
          scopes: string[];
          use_pkce: boolean;
        }
      >;
    };
    code_host: {
      enabled: boolean;
      cleanup: CleanupConfig;
      client_id?: string;
      client_secret?: string;
      redirect_address?: string;
      scopes: string[];
      allowed_organizations: string[];
    };
    cluster: {
      enabled: boolean;
      cleanup: CleanupConfig;
      discovery_url: string;
      ca_path: string;
      service_account_token_path: string;
    };
    jwt: {
      enabled: boolean;
      jwks_url?: string;
      public_key_file?: string;
      validate_claims: { issuer?: string; audiences: string[] };
    };
  };
}
