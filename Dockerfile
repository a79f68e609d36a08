# syntax=docker/dockerfile:1
# vexil container image: `docker build -t vexil .` then
#   docker run --rm -p 8080:8080 vexil                       # serves the bundled examples/
#   docker run --rm -p 8080:8080 -v "$PWD/flags:/flags:ro" -e VEXIL_STORAGE_LOCAL_PATH=/flags vexil
#   docker run --rm vexil validate /app/examples              # any other command
ARG NODE_IMAGE=node:26-bookworm-slim
ARG BUILD_IMAGE=node:26-bookworm

# --- build: all dependencies (better-sqlite3 compiles natively: the full image has python3, make
# and g++), compile TypeScript to dist/, then drop the dev dependencies ---
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off for the first install so this layer caches without the sources; the native module is
# built explicitly right after.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev --ignore-scripts

# --- runtime: production node_modules (with the compiled better-sqlite3) and the built files only ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY schemas ./schemas
COPY examples ./examples

# Bind all interfaces inside the container only; outside it the default stays 127.0.0.1.
ENV VEXIL_SERVER_HOST=0.0.0.0
# Token store (SQLite) and other state live here; mount a volume to keep them across restarts.
ENV VEXIL_DATA_DIR=/data
RUN mkdir -p /data && chown 1000:1000 /data
VOLUME /data
EXPOSE 8080

# The image's `node` user (uid 1000), numeric so Kubernetes' runAsNonRoot can verify it.
# The application files stay owned by root: read-only for the server.
USER 1000:1000

HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.VEXIL_SERVER_HTTP_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["node", "bin/vexil.js"]
CMD ["serve"]
