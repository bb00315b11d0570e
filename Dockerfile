# File Cloud container image. Build: docker build -t file-cloud .
# Run:   docker run -d -p 8000:8000 -v file-cloud-data:/data file-cloud
# (docs/operations.md has the whole walk-through.)

# --- build: the server and the web UI ------------------------------------------
# Node 24 (Active LTS), the version File Cloud is developed and tested on. No compiler: better-sqlite3 13
# and sharp ship their Node-API binaries inside their npm packages (linux x64 and arm64 alike).
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts off: `prepare` builds, and the sources are not here yet; and the `node` devDependency's
# install (a second Node 24 for checkouts on older systems) is not needed: the image is Node 24.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev && rm -rf dist/test dist/bench dist/soak \
    && find dist/src \( -name "*.test.js*" -o -name "*.test-suite.js*" \) -delete

# --- runtime: Node, the compiled app, production modules; no compiler, no root ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    FILE_CLOUD_HOST=0.0.0.0 \
    FILE_CLOUD_PORT=8000 \
    FILE_CLOUD_DATA_DIR=/data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/bin ./bin
COPY deploy/docker-entrypoint.sh deploy/healthcheck.mjs ./deploy/
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
# The image's unprivileged "node" user (uid 1000) owns only /data.
USER node
VOLUME ["/data"]
EXPOSE 8000
# Slim images have no curl: Node sends HEAD <base>/is_file_cloud (liveness).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "/app/deploy/healthcheck.mjs"]
ENTRYPOINT ["/app/deploy/docker-entrypoint.sh"]
CMD ["serve"]
