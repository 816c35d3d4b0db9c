#!/bin/bash
# Pod networking for the self-test without any CNI add-on: the reference bridge plugin on this
# node's pod CIDR, and a route to every other node's pod CIDR through that node.
# usage: cni.sh POD_CIDR [OTHER_POD_CIDR OTHER_NODE_IP]...
set -euo pipefail
cidr=$1
shift
mkdir -p /etc/cni/net.d
cat >/etc/cni/net.d/10-selftest.conflist <<JSON
{
  "cniVersion": "1.0.0",
  "name": "selftest",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
while [ $# -ge 2 ]; do
  ip route replace "$1" via "$2"
  shift 2
done
