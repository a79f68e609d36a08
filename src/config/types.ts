/**
 * The resolved server configuration: the YAML file's structure (snake_case keys, Flipt's layout),
 * merged with `VEXIL_*` environment overrides and defaults, validated by
 * `schemas/config.schema.json`. Durations are Go-style strings in the file and milliseconds here.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * `log.requests`: `all` = one line per request (info, warn for 4xx, error for 5xx); `errors` =
 * only requests answered 4xx or 5xx; `none` = no request lines. `log.level` still applies.
 */
export type RequestLogging = 'all' | 'errors' | 'none';

export interface Config {
  server: {
    host: string; // default 127.0.0.1
    http_port: number; // default 8080
    /** Serving processes (node:cluster): default 1 (no cluster), 0 = one per core. */
    workers: number;
    /** Live-update streams open at once (default 10,000; 0 = streaming off). */
    max_streams: number;
    /** ms between heartbeats on an idle stream (default 15s; 0 = none). */
    stream_heartbeat_interval: number;
    /** ms a hidden page's OFREP provider keeps its event stream (default 2m; OFREP inactivityDelaySec). */
    stream_inactivity_delay: number;
    /** Bytes a stream may have waiting for a slow client before it is dropped (default 1 MiB). */
    stream_buffer_limit: number;
    /** ms an idle keep-alive connection stays open (default 65s: above load balancers' 60 s). */
    keep_alive_timeout: number;
    /** ms a client may take to send the headers (default 66s; above keep_alive_timeout). */
    headers_timeout: number;
    /** `host:port` of a listener serving only `/metrics`, unauthenticated (unset: none). */
    metrics_address?: string;
    /** Proxies whose X-Forwarded-For is believed when recording a client's address (src/http/client-address.ts). */
    trusted_proxies: string[];
    /** Where people reach this vexil (unset: notifications carry no links). */
    public_url?: string;
  };
  log: {
    level: LogLevel; // default info
    encoding: 'json' | 'console'; // default json
    /** Which requests get a `request` line: default `errors` (answered 4xx or 5xx). */
    requests: RequestLogging;
  };
  storage: {
    type: 'local' | 'git' | 'oci' | 'object';
    /** Refuse a state file larger than this many bytes (default 8 MiB). */
    max_file_size: number;
    /** Refuse a revision whose state files add up to more bytes (default 64 MiB). */
    max_state_size: number;
    /** A reference the backend stops listing is dropped after `listings` polls (default 3) spanning `grace` ms (default 1m). */
    reference_removal: { listings: number; grace: number };
    local: { path: string };
    git: GitStorageConfig;
    oci: OciStorageConfig;
    object: ObjectStorageConfig;
  };
  /** Flipt v2 environment name → the reference it serves (default {}; `default` needs no entry). */
  environments: Record<string, { reference: string }>;
  /** Browser access from other origins (default off). */
  cors: CorsConfig;
  /** The web UI at `/` and `/ui/...` (src/server/ui-assets.ts). */
  ui: { enabled: boolean }; // default true
  /** `GET /api/v1/diff` (src/server/diff/slices.ts). */
  diff: {
    /** Diffs in progress at once per process; one more is 503 with Retry-After (default 4). */
    max_concurrent: number;
    /** ms diff work may hold the serving thread before other requests get their turn (default 200us). */
    slice: number;
  };
  /** OpenTelemetry traces (src/server/tracing.ts). */
  tracing: TracingConfig;
  /** Push webhooks under /hooks/ (src/server/hooks/); each is off unless its secret is set. */
  webhooks: WebhooksConfig;
  /** Replicas sharing the work of following the backend (src/store/coordination/). */
  cluster: { coordination: CoordinationConfig };
  /** The served-revision history (src/store/history/); max_age as written (`90d`, parsed by age.ts). */
  history: { retention: { max_age: string; max_entries: number } };
  /** Change notifications (src/store/notifications/). */
  notifications: { sinks: NotificationSinkConfig[] };
  /** Folder for state kept between runs; absent = the OS data folder (see src/config/data-dir.ts). */
  data_dir?: string;
  authentication: AuthenticationConfig;
}

/** One of `notifications.sinks` (timeout in ms). */
export interface NotificationSinkConfig {
  type: 'webhook' | 'slack';
  url: string;
  secret?: string;
  references: string[]; // default ["*"]
  namespaces: string[]; // default []
  events: Array<'served' | 'rejected' | 'audit'>; // default [served, rejected]
  timeout: number; // default 10s
  retries: number; // default 5
  queue_size: number; // default 1000
}

/** `tracing.*` (src/server/tracing.ts; docs/tracing.md). */
export interface TracingConfig {
  enabled: boolean; // default false
  service_name: string; // default vexil
  /** 0..1, parent-based (default 1). */
  sampling_ratio: number;
  otlp: { endpoint?: string; headers: Record<string, string> };
}

/**
 * `webhooks.*`: each provider's shared secret, given inline or as a file path (at most one of the
 * two; paths resolved like other paths). Read at start by src/server/hooks/secrets.ts.
 */
export interface WebhooksConfig {
  github: { secret?: string; secret_file?: string };
  gitlab: { token?: string; token_file?: string };
  gitea: { secret?: string; secret_file?: string };
  generic: { secret?: string; secret_file?: string };
  registry: { token?: string; token_file?: string };
}

/** `cors.*`, Flipt's names (src/server/pipeline/cors.ts; origin syntax in src/http/origins.ts). */
export interface CorsConfig {
  enabled: boolean; // default false
  /** `["*"]` (default): every origin, without credentials; else origins echoed with credentials. */
  allowed_origins: string[];
  /** Request headers allowed besides the ones vexil's clients send (default []). */
  allowed_headers: string[];
}

/** `storage.git.*` (durations in ms; paths as written, see src/sources/git/options.ts). */
export interface GitStorageConfig {
  /** Required with storage.type git: an http(s) URL or a local repository path. */
  repository?: string;
  ref: string; // default main
  directory: string; // default ""
  poll_interval: number; // ms, default 30s
  insecure_skip_tls: boolean;
  ca_cert_path?: string;
  authentication: {
    basic?: { username: string; password: string };
    token?: { access_token?: string; access_token_path?: string };
  };
  /** Default: vexil-git-cache under the OS temp folder. */
  cache_dir?: string;
  /** Reference globs built on every poll; default [ref]. */
  prebuild?: string[];
  idle_ttl: number; // ms, default 10m
  max_staleness: number; // ms, default 5m
  /** References built on request kept at once (default 64; default and prebuilt ones not counted). */
  max_references: number;
  /** On-demand builds waiting or running at once (default 8). */
  max_pending_builds: number;
  /** Serve unlisted full commit ids named as `reference` (default true). */
  allow_commit_references: boolean;
  /** Bytes one fetch may receive (default 1 GiB). */
  max_fetch_size: number;
}

/** `storage.oci.*` (durations in ms; paths as written, resolved by src/sources/oci/from-config.ts). */
export interface OciStorageConfig {
  /** Required with storage.type oci: `[http(s)://]host[:port]/name:tag` or `...@sha256:<hex>`. */
  repository?: string;
  /** Plain HTTP to the registry. */
  insecure: boolean;
  /** Local bundle store (OCI image layout); default <data_dir>/bundles. */
  bundles_directory?: string;
  authentication: { username?: string; password?: string; access_token_path?: string };
  poll_interval: number; // ms, default 30s
  manifest_version: '1.1' | '1.0';
  max_staleness: number; // ms, default 5m
}

/** `storage.object.*` (durations in ms). */
export interface ObjectStorageConfig {
  /** Required with storage.type object. */
  type?: 's3' | 'azblob' | 'googlecloud';
  s3: {
    /** Required with type s3. */
    bucket?: string;
    prefix: string; // default ""
    region?: string;
    endpoint?: string;
    poll_interval: number; // ms, default 1m
    max_staleness: number; // ms, default 5m
  };
  /** Azure Blob Storage; credentials from AZURE_STORAGE_* only. */
  azblob: {
    /** Required with type azblob. */
    container?: string;
    prefix: string; // default ""
    endpoint?: string;
    poll_interval: number; // ms, default 1m
    max_staleness: number; // ms, default 5m
  };
  /** Google Cloud Storage through its XML API, served by the S3 provider. */
  googlecloud: {
    /** Required with type googlecloud. */
    bucket?: string;
    prefix: string; // default ""
    endpoint: string; // default https://storage.googleapis.com
    /** Both or neither; else GOOGLE_HMAC_ACCESS_ID / GOOGLE_HMAC_SECRET. */
    hmac: { access_id?: string; secret?: string };
    poll_interval: number; // ms, default 1m
    max_staleness: number; // ms, default 5m
  };
}

export interface CleanupConfig {
  interval: number; // ms, default 1h
  grace_period: number; // ms, default 30m
}

/** `authentication.admins` (src/auth/admins.ts): who may list and delete tokens they did not create. */
export interface AuthenticationAdmins {
  /** Static token ids or names (names listed here can be given to a new token by an admin only). */
  tokens: string[];
  oidc: { emails: string[]; claims: Record<string, string[]> };
  code_host: { logins: string[]; organizations: string[]; teams: Record<string, string[]> };
  /** `namespace/name`, or `namespace/*` for every service account of a namespace. */
  cluster: { service_accounts: string[] };
  jwt: { claims: Record<string, string[]> };
}

export interface AuthenticationConfig {
  required: boolean;
  /** Refuse to start on the configurations src/auth/startup-checks.ts warns about (default false). */
  strict: boolean;
  /** Unset: every unscoped principal administers every token (Flipt's behaviour, warned at start). */
  admins?: AuthenticationAdmins;
  /** ms, default 5s; 0 = no in-memory token lookup cache. */
  cache_ttl: number;
  storage: {
    type: 'sqlite' | 'postgres'; // default sqlite
    sqlite: { path?: string }; // default <data_dir>/auth.db
    postgres: {
      url?: string; // required with type postgres
      connect_timeout: number; // ms, default 5s
      query_timeout: number; // ms, default 5s
      pool_wait_timeout: number; // ms, default 5s
      outage_grace: number; // ms, default 5m; cached tokens accepted while the database is unreachable
    };
  };
  exclude: { management: boolean; evaluation: boolean; metrics: boolean };
  session: {
    domain?: string;
    secure: boolean;
    token_lifetime: number; // ms, default 24h
    state_lifetime: number; // ms, default 10m
    /** src/auth/csrf.ts: `secure` has no effect (as in Flipt 1.61). */
    csrf: { key?: string; secure: boolean; trusted_origins: string[] };
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
      /** Organization → team slugs (default {}); see src/auth/code-host/access.ts. */
      allowed_teams: Record<string, string[]>;
      server_url: string; // default https://github.com
      api_url: string; // default https://api.github.com
      /** A fresh S256 PKCE verifier per login (default true). */
      use_pkce: boolean;
      /** ms, default 10m: how often a session's organizations and teams are asked of the code host again. */
      recheck_interval: number;
    };
    cluster: {
      enabled: boolean;
      cleanup: CleanupConfig;
      discovery_url: string;
      ca_path: string;
      service_account_token_path: string;
      /** Empty: the token's audience is not checked (Flipt). */
      audiences: string[];
    };
    jwt: {
      enabled: boolean;
      jwks_url?: string;
      public_key_file?: string;
      /** CA certificates trusted for an https jwks_url. */
      ca_path?: string;
      leeway: number; // ms, default 1m
      validate_claims: { issuer?: string; subject?: string; audiences: string[] };
    };
  };
}

/** `cluster.coordination.*` (durations in ms). */
export interface CoordinationConfig {
  /** none (default): every replica polls on its own. */
  type: 'none' | 'postgres' | 'redis';
  /** Required with type postgres. */
  postgres: { url?: string };
  /** Required with type redis. */
  redis: { url?: string };
  /** ms between a follower's comparisons with the engine's table (default 5m, jittered). */
  backstop_interval: number;
  /** ms a replica may serve another revision of the default reference than the cluster's before /ready is 503 (unset: never). */
  max_lag?: number;
}
