# Periscope's Node server on the official Node image. Node 24 runs the TypeScript sources as
# they are (type stripping), so the image holds the production dependencies and the sources:
# no build stage, no compiler. Runs as the image's unprivileged `node` user; keys, the search
# snapshot and the PID file live in the /data volume.
#
#   docker build -t periscope-search .
#   docker run -p 8080:8080 -v periscope-data:/data periscope-search
#   docker run --rm -v periscope-data:/data periscope-search keys create my-app
FROM node:24-bookworm-slim

ENV NODE_ENV=production \
    PERISCOPE_DATA_DIR=/data \
    PORT=8080
WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lock file changes. The versions are the
# lock file's; `npm install` rather than `npm ci` because the lock holds only the Linux x64 entry of
# deno's per-platform optional packages (a devDependency), which `npm ci` refuses as out of sync.
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

COPY core ./core
COPY adapters ./adapters
COPY LICENSE README.md ./

RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The `periscope` command line: `serve` by default; `keys create|list|revoke`, `index` and `reload` too.
ENTRYPOINT ["node", "/app/adapters/node/cli.ts"]
CMD ["serve"]
