# syntax=docker/dockerfile:1
# vexil container image: `docker build -t vexil .` then
#   docker run --rm -p 8080:8080 vexil                       # serves the bundled examples/
#   docker run --rm -p 8080:8080 -v "$PWD/flags:/flags:ro" -e VEXIL_STORAGE_LOCAL_PATH=/flags vexil
#   docker run --rm vexil validate /app/examples              # any other command
ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: all dependencies, compile TypeScript to dist/ ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off here: `prepare` runs tsc, and the sources are not copied yet (better layer caching).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- runtime: production dependencies and the built files only ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run tsc, which is a dev dependency and absent here.
# A future dependency with a native build step would need `npm rebuild <name>` (and a toolchain) here.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY schemas ./schemas
COPY examples ./examples

# Bind all interfaces inside the container only; outside it the default stays 127.0.0.1.
ENV VEXIL_SERVER_HOST=0.0.0.0
EXPOSE 8080

# The image's `node` user (uid 1000), numeric so Kubernetes' runAsNonRoot can verify it.
# The application files stay owned by root: read-only for the server.
USER 1000:1000

HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.VEXIL_SERVER_HTTP_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["node", "bin/vexil.js"]
CMD ["serve"]
