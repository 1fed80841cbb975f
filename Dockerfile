# The servebench container image: the static binary (CGO_ENABLED=0, no libc needed) on a
# distroless base, at /usr/local/bin/servebench, running as a non-root user (uid 65532).
#
#   docker build -t registry.example/servebench:0.1 --build-arg VERSION=0.1 .
#   docker push registry.example/servebench:0.1
#   servebench k8s manifests --workers 4 --plan plan.yaml --image registry.example/servebench:0.1
#
# See docs/distributed.md.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/servebench ./cmd/servebench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/servebench /usr/local/bin/servebench
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/servebench"]
