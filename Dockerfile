# syntax=docker/dockerfile:1
#
# The identity provider as a container image.
#
#   docker build -t idp .
#   docker run -p 3000:3000 -e COOKIE_SECRET=... -v idp-data:/data idp     # embedded PGlite in /data
#   docker compose up -d --build                                           # with PostgreSQL, see docker-compose.yml
#
# The operator CLI runs inside the container, against the same database as the server:
#   printf '%s' "$PASSWORD" | docker compose exec -T idp idp users create --username alice --password-stdin
#   docker compose exec idp node bin/idp.js clients list --json    # the same CLI, by its path
#   docker compose exec idp npx idp status set operational         # and through npx
# With the embedded database the CLI hands its command to the running server through a socket in
# /data, so `docker exec` into the running container (not a second `docker run` on the same volume).
#
# The image runs as the unprivileged `node` user. A bind mount on /data must be writable by uid 1000.

# One base for every stage: Node 24 LTS (CI runs the suites on the same line) on Debian 12 (glibc;
# argon2 ships prebuilt glibc binaries).
FROM node:24-bookworm-slim AS base
WORKDIR /app

# Dependencies are installed with their install scripts. argon2's (approved in package.json's
# allowScripts) keeps its prebuilt binary when that loads and otherwise compiles the addon with
# node-gyp, which needs these compilers: argon2 0.45.1's linux-x64 glibc prebuild was seen to crash
# on load on Debian 12, so do not drop them. They never reach the runtime image.
FROM base AS toolchain
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# `npm ci` runs package.json's "prepare" (bin/build-if-stale.js and what it imports), which compiles
# nothing here: no src/ yet in the build stage, no compiler in the production dependencies.
COPY bin/build-if-stale.js bin/launch.js bin/node-version.js ./bin/

# Compiles src/ and migrations/ to dist/src/ and dist/migrations/ (tsconfig.build.json).
FROM toolchain AS build
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# Production dependencies only; fails the build if the argon2 native addon does not load.
FROM toolchain AS prod-deps
RUN npm ci --omit=dev --no-audit --no-fund \
  && node -e "require('argon2').hash('image-check').then(() => {}, (e) => { console.error(e); process.exit(1); })"

FROM base AS runtime
ENV NODE_ENV=production \
    MALLOC_MMAP_THRESHOLD_=1048576 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=prod-deps /app/node_modules ./node_modules
# bin/launch.js runs dist/ when src/ is absent: src/ is deliberately not in the image.
COPY --from=build /app/dist ./dist
# Server-rendered pages (sign-in, consent, account, errors).
COPY views ./views
COPY public ./public
# The application files stay owned by root (read-only to the service); only /data is writable.
# /data is prepared before VOLUME so that a new named volume inherits the node user's ownership.
# `idp` is put on PATH; `npx idp` links the package's own bin into the npx cache and chmods it,
# which only the file's owner may do, so bin/idp.js (alone) belongs to the node user.
RUN mkdir -p /data \
  && chown node:node /data /app/bin/idp.js \
  && ln -s /app/bin/idp.js /usr/local/bin/idp
VOLUME ["/data"]
USER node
EXPOSE 3000
# The server finishes in-flight requests on SIGTERM (src/main.ts), also as PID 1.
STOPSIGNAL SIGTERM
# No curl in slim images: Node's own fetch asks the readiness route (database reachable).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=512", "--expose-gc", "bin/server.js"]
