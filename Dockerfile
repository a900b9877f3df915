# lapse as a small static image. No Docker engine runs where lapse is
# developed, so this file stays simple enough to be right by reading, and a
# test checks it without one (cmd/lapse/image_test.go): it runs the go build
# line below as written, lays out a root as the COPY lines say and runs the
# binary there as USER, with ENV, ENTRYPOINT, CMD and HEALTHCHECK as below.

# The build stage runs on the builder's own platform and cross-compiles for
# the image's (docker buildx build --platform linux/amd64,linux/arm64):
# Go needs no emulator for that, only GOOS and GOARCH.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
ARG VERSION=dev
# A static binary (CGO_ENABLED=0: the SQLite driver is pure Go), an empty
# data folder and a /tmp for SQLite's temporary files, to copy into scratch.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/lapse ./cmd/lapse \
 && mkdir -p /out/data /out/tmp \
 && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /out/lapse /lapse
COPY --from=build /out/tmp /tmp
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV LAPSE_DATA=/data
VOLUME /data
# AMQP (Service Bus and RabbitMQ), AMQPS, Cosmos DB, Service Bus
# administration, Service Bus AMQP over WebSockets, RabbitMQ management,
# control API and dashboard.
EXPOSE 5672 5671 8081 5300 5443 15672 8080
# No shell nor curl in scratch: the binary checks its own /healthz. The
# address is 127.0.0.1, not localhost: scratch has no /etc/hosts of its own.
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=10 \
  CMD ["/lapse", "healthcheck", "--control-url", "http://127.0.0.1:8080"]
ENTRYPOINT ["/lapse"]
CMD ["serve"]
