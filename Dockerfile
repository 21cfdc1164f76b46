# The otelcol-k8s image for people who build with Docker (docker buildx build --platform
# linux/amd64,linux/arm64 .): the distribution of cmd/otelcol-k8s and the node agent's build of
# cmd/otelcol-k8s-node (the DaemonSet's command), static, on an empty base
# with the CA roots of the build image, running as uid 10001 unless the pod says otherwise (the
# node agent's DaemonSet runs it as uid 0 to read kubelet's 0640 log files).
ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY . .
RUN cd cmd/otelcol-k8s && CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/otelcol-k8s .
RUN cd cmd/otelcol-k8s-node && CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/otelcol-k8s-node .

FROM scratch
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="otelcol-k8s" \
      org.opencontainers.image.source="https://github.com/otelcol-k8s/otelcol-k8s" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/otelcol-k8s /otelcol-k8s
COPY --from=build /out/otelcol-k8s-node /otelcol-k8s-node
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 10001:10001
ENTRYPOINT ["/otelcol-k8s"]
CMD ["--config=/etc/otelcol-k8s/config.yaml"]
