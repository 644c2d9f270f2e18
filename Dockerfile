# idlegrid node image: bootstrap, provider or renter (the first argument).
#
# Build (no registry is needed inside the build: Node 22 and node_modules come from the context):
#   npm install && npm run build
#   docker build -t idlegrid "$(scripts/docker-context.sh)"                        # base debian:bookworm-slim
#   docker build --build-arg BASE=idlegrid-base:bookworm -t idlegrid "$(scripts/docker-context.sh)"
#     (scripts/base-image.sh makes that base from Debian's packages, for engines with no registry)
# Run a provider (GPUs through the NVIDIA container runtime; see docs/install.md):
#   docker run --rm --gpus all -v idlegrid-data:/data idlegrid \
#     init --role provider --data-dir /data --bootstrap /dns4/SEED/tcp/4001/p2p/PEER_ID   # once: writes /data/provider.yaml
#   docker run -d --gpus all -v idlegrid-data:/data -p 4011:4011 idlegrid provider --config /data/provider.yaml
# The NVIDIA container runtime (nvidia-container-toolkit on the host, then
# `nvidia-ctk runtime configure --runtime=docker`) mounts the driver and nvidia-smi into the
# container with --gpus; the image itself carries no driver. Jobs run with --runner process
# inside the container (a provider container cannot start sibling containers unless you give
# it the host's Docker socket, which hands it root on the host: see docs/install.md).
ARG BASE=debian:bookworm-slim

# The application tree, owned by root and read-only to the node: scripts/docker-context.sh
# sets its modes (a+rX, go-w) before the build, so one COPY is the whole layer (a chmod -R in
# a RUN would copy all of node_modules into a second layer).
FROM ${BASE}
COPY app /opt/idlegrid
# uid/gid 10001 without useradd (a minbase Debian has no passwd package); /seed: the mount point
# where deploy/compose.yaml's seed publishes its address (a fresh volume takes this owner)
RUN /opt/idlegrid/bin/node -e 'if (Number(process.versions.node.split(".")[0]) < 22) process.exit(1)' && \
    echo 'idlegrid:x:10001:10001:idlegrid node:/data:/usr/sbin/nologin' >> /etc/passwd && \
    echo 'idlegrid:x:10001:' >> /etc/group && \
    mkdir -p /data /seed && chown 10001:10001 /data /seed && chmod 700 /data && \
    ln -s /opt/idlegrid/bin/node /usr/local/bin/node && \
    printf '#!/bin/sh\nexec /opt/idlegrid/bin/node /opt/idlegrid/dist/src/cli/bin.js "$@"\n' > /usr/local/bin/idlegrid && \
    chmod 755 /usr/local/bin/idlegrid
ENV IDLEGRID_DATA_DIR=/data HOME=/data NODE_ENV=production
VOLUME /data
USER 10001:10001
WORKDIR /data
# 4001/4002: a seed's TCP and WebSocket ports; 4011: the provider's port (idlegrid init)
EXPOSE 4001 4002 4011
ENTRYPOINT ["/usr/local/bin/idlegrid"]
CMD ["--help"]
