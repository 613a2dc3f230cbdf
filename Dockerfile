# The payment service sandbox (`payment-service-sdk sandbox`) as a container image, built from the
# repository root after the repository's own build, with no network beyond pulling the base:
#   npm run build && docker build -t payment-service-sdk/sandbox .
# or `npm run image` (scripts/image.mjs: the build, then `docker build`/`podman build` of this folder
# with the version, revision and build-digest arguments, tagged :<version> and :latest).
# .dockerignore sends only what this file copies: dist's CommonJS files and the health check.
# Run it with
#   docker run --rm -p 127.0.0.1:4010:4010 payment-service-sdk/sandbox
# Arguments after the image name are the sandbox's flags; every flag is also an environment
# variable PAYMENT_SANDBOX_<FLAG> (docs/sandbox.md, "Container image").
ARG BASE=node:24-slim
FROM ${BASE}

# /data, owned by the base's `node` user (uid 1000): the only folder the sandbox writes. Made by
# node itself (exec form): the base needs no mkdir or chown, only its node.
RUN ["node", "-e", "require('node:fs').mkdirSync('/data', { recursive: true }); require('node:fs').chownSync('/data', 1000, 1000)"]
# The CLI, owned by root: the sandbox's user cannot change its own code. dist's CommonJS files bundle
# every dependency the sandbox loads (no node_modules); the health check beside them.
COPY dist/*.cjs /app/dist/
COPY container/healthcheck.cjs /app/healthcheck.cjs

# The labels after the files: builds that differ only in them (npm run image's, a plain
# `docker build .`) share the layers above.
# package.json's version (test/container.test.ts checks that they agree); npm run image passes it.
ARG VERSION=0.1.0
ARG SOURCE=https://github.com/payment-service-sdk/payment-service-sdk
ARG LICENSE=MIT
ARG REVISION=
# The digest of what the image is made of (scripts/image.mjs); the container tests rebuild an image
# whose label is not the current files' (test/support/containers.ts). Empty from a plain build.
ARG BUILD_DIGEST=
LABEL org.opencontainers.image.title="payment-service-sdk sandbox" \
      org.opencontainers.image.description="Local emulator of the payment service: Test and Live APIs, hosted payment page, webhooks, dashboard" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="${LICENSE}" \
      org.opencontainers.image.revision="${REVISION}" \
      payment-service-sdk.build-digest="${BUILD_DIGEST}"

# In a container the sandbox listens on all of the container's addresses, on 4010, keeps its state
# in /data, and keeps the documented keys, client secrets and open dashboard: nothing reaches it but
# through a port you publish (`-p 127.0.0.1:4010:4010`) or a network you made (docker-compose).
ENV PAYMENT_SANDBOX_HOST=0.0.0.0 \
    PAYMENT_SANDBOX_PORT=4010 \
    PAYMENT_SANDBOX_DATA_DIR=/data \
    PAYMENT_SANDBOX_TRUSTED_NETWORK=true \
    NODE_ENV=production

USER node
WORKDIR /data
EXPOSE 4010
VOLUME /data
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "/app/healthcheck.cjs"]
# The sandbox's small young generation given at once (src/cli/sandbox.ts would otherwise restart
# node with it): one node start, not two, before the first answer.
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/cli.cjs", "sandbox"]
