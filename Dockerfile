# The loadsim image that contrib/k8s/ runs: the release binary, with the repository's scenarios,
# sweeps and schemas in /loadsim (the working folder, so `loadsim sweep sweeps/blog37.yaml` works
# as in a checkout).
#
#   docker build -t loadsim:0.1.0 .
#
# The tag is the version in Cargo.toml; contrib/k8s/*.yaml name this image (a test checks both).
FROM rust:1.88-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && cp target/release/loadsim /usr/local/bin/loadsim

FROM debian:bookworm-slim
COPY --from=build /usr/local/bin/loadsim /usr/local/bin/loadsim
WORKDIR /loadsim
COPY scenarios/ scenarios/
COPY sweeps/ sweeps/
COPY schema/ schema/
# Not root: the manifests give the results volume to this group (fsGroup).
USER 65532:65532
ENTRYPOINT ["loadsim"]
CMD ["--help"]
