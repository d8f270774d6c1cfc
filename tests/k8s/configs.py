"""The local Kubernetes' configuration (local.py starts it): its addresses and places, the
certificates of each cluster, the kubeconfigs, the kubelet's, containerd's and CNI's files,
and each part's command line. Why each setting is as it is: local.py's docstring."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import parts
import yaml

STATE = Path(os.environ.get("NUMASPARK_K8S_DIR") or "/var/lib/numaspark-k8s")
BRIDGE = "nsk8s0"
GATEWAY = "10.233.0.1"
POD_SUBNET = "10.233.0.0/24"
SERVICE_RANGE = "10.96.0.0/24"
API_SERVICE_IP = "10.96.0.1"  # the kubernetes service's address, the first of SERVICE_RANGE
CLUSTER_DOMAIN = "cluster.local"
CGROUP_ROOT = "numaspark-k8s"
NODE = "numaspark-local"
NAMESPACE = "default"
COREDNS_USER = "numaspark:coredns"
# what the API server is told once it is up, before the parts that need it start: CoreDNS's
# right to read what it answers for (the role CoreDNS's own deployment gives it), and a
# service account ``spark`` that may make a driver's executor pods, services and config maps
# (cluster deploy mode: spark.kubernetes.authenticate.driver.serviceAccountName=spark)
MANIFESTS = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "numaspark:coredns"},
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["endpoints", "services", "pods", "namespaces"],
                "verbs": ["list", "watch"],
            },
            {
                "apiGroups": ["discovery.k8s.io"],
                "resources": ["endpointslices"],
                "verbs": ["list", "watch"],
            },
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "numaspark:coredns"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "numaspark:coredns",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": COREDNS_USER}
        ],
    },
    {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "spark", "namespace": NAMESPACE},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "spark-edit", "namespace": NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "ServiceAccount", "name": "spark", "namespace": NAMESPACE}],
    },
]
CONTROLLERS = Path("/sys/fs/cgroup")
# cgroup v2 (a unified hierarchy: the two-node guest's) rather than this machine's v1
CGROUP_V2 = (CONTROLLERS / "cgroup.controllers").exists()
# how many times longer than here each wait may take (the guest's software emulation: 8)
PATIENCE = float(os.environ.get("NUMASPARK_K8S_PATIENCE") or 1)
# containerd's root (its images): in the state directory, which down removes, unless given
# elsewhere (the two-node guest keeps its images for its second cluster: their import takes
# 13 minutes under emulation)
CONTAINERD_ROOT = Path(os.environ.get("NUMASPARK_K8S_CONTAINERD_ROOT") or STATE / "containerd")
PR_SET_CHILD_SUBREAPER = 36
# the kubelet's settings this machine needs whatever file is merged: they win
LOCAL_KUBELET = {
    "failCgroupV1": False,  # cgroup v1 only here: refused since 1.35 unless told
    "cgroupDriver": "cgroupfs",  # no systemd here
    "cgroupRoot": f"/{CGROUP_ROOT}",
    "containerRuntimeEndpoint": f"unix://{STATE / 'run/containerd.sock'}",
}


class ClusterError(Exception):
    """What went wrong, in one line, with how to fix it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)


# --- certificates -------------------------------------------------------------------------


def _openssl(*args: str | Path) -> None:
    done = run(["openssl", *args])
    if done.returncode != 0:
        raise ClusterError(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")


def certificates(pki: Path) -> None:
    """A CA of this cluster's own and each part's certificate signed by it, and the
    service accounts' signing key, all RSA 2048."""
    pki.mkdir(parents=True, exist_ok=True)
    # RSA: Spark's Kubernetes client (fabric8) reads a PKCS#8 EC key as RSA and fails
    # ("Invalid DER: object is not integer"), and kubeadm's clusters use RSA too
    key = ["-newkey", "rsa:2048", "-nodes"]
    _openssl(
        "req",
        "-x509",
        *key,
        "-keyout",
        pki / "ca.key",
        "-out",
        pki / "ca.crt",
        "-days",
        "365",
        "-subj",
        "/CN=numaspark-k8s-ca",
    )
    wanted = {
        # name: (subject, subjectAltName or None)
        "apiserver": (
            "/CN=kube-apiserver",
            f"IP:{GATEWAY},IP:127.0.0.1,IP:{API_SERVICE_IP},DNS:localhost,DNS:kubernetes,"
            "DNS:kubernetes.default,"
            "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local",
        ),
        "admin": ("/O=system:masters/CN=numaspark-admin", None),
        "controller-manager": ("/CN=system:kube-controller-manager", None),
        "scheduler": ("/CN=system:kube-scheduler", None),
        "kube-proxy": ("/CN=system:kube-proxy", None),  # bound to system:node-proxier
        "coredns": (f"/CN={COREDNS_USER}", None),  # bound by COREDNS_RBAC
        "kubelet-client": (f"/O=system:nodes/CN=system:node:{NODE}", None),
        "kubelet-server": (f"/CN={NODE}", f"IP:{GATEWAY},IP:127.0.0.1,DNS:{NODE}"),
        "apiserver-kubelet-client": ("/O=system:masters/CN=kube-apiserver-kubelet-client", None),
        # a user no role is bound to: the refusal of a user who may not create pods (item 4)
        "viewer": ("/CN=numaspark-viewer", None),
    }
    for name, (subject, alt) in wanted.items():
        extensions = pki / f"{name}.ext"
        lines = [
            "basicConstraints=CA:FALSE",
            "keyUsage=digitalSignature,keyEncipherment",
            "extendedKeyUsage=serverAuth,clientAuth",
        ]
        if alt:
            lines.append(f"subjectAltName={alt}")
        extensions.write_text("\n".join(lines) + "\n")
        _openssl(
            "req",
            *key,
            "-keyout",
            pki / f"{name}.key",
            "-out",
            pki / f"{name}.csr",
            "-subj",
            subject,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            pki / f"{name}.csr",
            "-CA",
            pki / "ca.crt",
            "-CAkey",
            pki / "ca.key",
            "-CAcreateserial",
            "-out",
            pki / f"{name}.crt",
            "-days",
            "365",
            "-extfile",
            extensions,
        )
    _openssl("genrsa", "-out", pki / "sa.key", "2048")
    _openssl("rsa", "-in", pki / "sa.key", "-pubout", "-out", pki / "sa.pub")
    for key in pki.glob("*.key"):
        key.chmod(0o600)


def kubeconfig(path: Path, server: str, pki: Path, user: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "numaspark-local",
                "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate": str(pki / f"{user}.crt"),
                    "client-key": str(pki / f"{user}.key"),
                },
            }
        ],
        "contexts": [
            {"name": "numaspark-local", "context": {"cluster": "numaspark-local", "user": user}}
        ],
        "current-context": "numaspark-local",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path


# --- configuration ------------------------------------------------------------------------


def kubelet_config(ports: dict, merged: Path | None) -> dict:
    """The kubelet's configuration: this cluster's defaults, numaspark's file (``merged``, from
    ``plan --target k8s``) over them, and LOCAL_KUBELET over both."""
    pki = STATE / "pki"
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": GATEWAY,
        "port": ports["kubelet"],
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": ports["kubelet_healthz"],
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(pki / "ca.crt")},
        },
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": str(pki / "kubelet-server.crt"),
        "tlsPrivateKeyFile": str(pki / "kubelet-server.key"),
        "failSwapOn": False,
        "cgroupsPerQOS": True,
        # a shared machine's disk is not this node's: evict only when it is nearly full
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "2%",
            "imagefs.available": "2%",
            "nodefs.inodesFree": "2%",
        },
        "imageGCHighThresholdPercent": 99,
        "imageGCLowThresholdPercent": 98,
        "resolvConf": "",
        # the cluster's DNS: CoreDNS on the node's address (pods reach it there; no
        # kube-proxy route to a service address is needed for DNS itself)
        "clusterDNS": [GATEWAY],
        "clusterDomain": CLUSTER_DOMAIN,
        "serializeImagePulls": False,
    }
    if merged is not None:
        try:
            theirs = yaml.safe_load(merged.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ClusterError(f"--kubelet-config {merged}: {exc}") from None
        if theirs.get("kind") != "KubeletConfiguration":
            raise ClusterError(
                f"--kubelet-config {merged}: not a KubeletConfiguration (give the "
                "kubelet-config.yaml that `numaspark plan --target k8s --out DIR` writes)"
            )
        config.update({k: v for k, v in theirs.items() if k not in ("apiVersion", "kind")})
    config.update(LOCAL_KUBELET)
    return config


def containerd_config(pause: str) -> str:
    """containerd 2's configuration (version 3): its root and state in the state directory,
    runc from Debian, CNI from Debian's plugins with this cluster's configuration, the pause
    image imported here pinned as the sandbox, and no oom_score_adj below containerd's own
    (this machine's root may not lower one)."""
    state = STATE / "run/containerd"
    return f"""version = 3
root = "{CONTAINERD_ROOT}"
state = "{state}"

[grpc]
  address = "{STATE / "run/containerd.sock"}"

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "{pause}"

[plugins."io.containerd.cri.v1.runtime"]
  netns_mounts_under_state_dir = true
  # root here lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj below 0: the
  # pause container's -998 and a Guaranteed container's -997 are kept at containerd's own
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["{parts.CNI_BIN}"]
    conf_dir = "{STATE / "cni/net.d"}"
"""


def cni_config() -> str:
    return json.dumps(
        {
            "cniVersion": "1.0.0",
            "name": "numaspark",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_SUBNET, "gateway": GATEWAY}]],
                        # a default route through the node: a service's address (kube-proxy
                        # takes it to its endpoints there) is off the pods' subnet
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(STATE / "cni/ipam"),
                    },
                }
            ],
        },
        indent=2,
    )


def kube_proxy_config(ports: dict) -> dict:
    """kube-proxy's configuration: iptables rules that take a service's address to its
    endpoints (the kubernetes service's to the API server, for a driver pod in cluster deploy
    mode); its own servers on loopback; the machine's conntrack settings left as they are."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(STATE / "kubeconfig/kube-proxy")},
        "mode": "iptables",
        "clusterCIDR": POD_SUBNET,
        "hostnameOverride": NODE,
        "healthzBindAddress": f"127.0.0.1:{ports['kube_proxy_healthz']}",
        "metricsBindAddress": f"127.0.0.1:{ports['kube_proxy_metrics']}",
        "nodePortAddresses": [POD_SUBNET],  # a NodePort service's port on the bridge alone
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
    }


def corefile() -> str:
    """CoreDNS's configuration: the cluster's names (services, pods, their reverse names) on
    the node's address, from the API; nothing else (nothing is forwarded off this machine)."""
    return f"""{CLUSTER_DOMAIN}:53 in-addr.arpa:53 {{
    bind {GATEWAY}
    errors
    cache 5
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa {{
        kubeconfig {STATE / "kubeconfig/coredns"} numaspark-local
    }}
}}
"""


def commands(bins: Path, ports: dict) -> list[tuple[str, list[str]]]:
    """Each part's command line, in the order they start."""
    pki = STATE / "pki"
    etcd_url = f"http://127.0.0.1:{ports['etcd']}"
    peer = f"http://127.0.0.1:{ports['etcd_peer']}"
    kubeconfigs = STATE / "kubeconfig"
    return [
        (
            "etcd",
            [
                str(bins / "etcd"),
                "--name",
                "numaspark",
                "--data-dir",
                str(STATE / "etcd"),
                "--listen-client-urls",
                etcd_url,
                "--advertise-client-urls",
                etcd_url,
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                f"numaspark={peer}",
                "--log-level",
                "warn",
            ],
        ),
        (
            "kube-apiserver",
            [
                str(bins / "kube-apiserver"),
                "--etcd-servers",
                etcd_url,
                # on the node's address, which only this machine and its pods reach: a driver
                # pod (cluster deploy mode) talks to the API through the kubernetes service
                "--bind-address",
                GATEWAY,
                "--advertise-address",
                GATEWAY,
                "--secure-port",
                str(ports["apiserver"]),
                "--tls-cert-file",
                str(pki / "apiserver.crt"),
                "--tls-private-key-file",
                str(pki / "apiserver.key"),
                "--client-ca-file",
                str(pki / "ca.crt"),
                "--authorization-mode",
                "Node,RBAC",
                "--service-account-key-file",
                str(pki / "sa.pub"),
                "--service-account-signing-key-file",
                str(pki / "sa.key"),
                "--service-account-issuer",
                "https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range",
                SERVICE_RANGE,
                "--kubelet-client-certificate",
                str(pki / "apiserver-kubelet-client.crt"),
                "--kubelet-client-key",
                str(pki / "apiserver-kubelet-client.key"),
                "--kubelet-preferred-address-types",
                "InternalIP",
                "--allow-privileged=true",
                "--profiling=false",
            ],
        ),
        (
            "kube-controller-manager",
            [
                str(bins / "kube-controller-manager"),
                "--kubeconfig",
                str(kubeconfigs / "controller-manager"),
                "--authentication-kubeconfig",
                str(kubeconfigs / "controller-manager"),
                "--authorization-kubeconfig",
                str(kubeconfigs / "controller-manager"),
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                str(ports["controller_manager"]),
                "--service-account-private-key-file",
                str(pki / "sa.key"),
                "--root-ca-file",
                str(pki / "ca.crt"),
                "--use-service-account-credentials=true",
                "--service-cluster-ip-range",
                SERVICE_RANGE,
                "--leader-elect=false",
                "--profiling=false",
            ],
        ),
        (
            "kube-scheduler",
            [
                str(bins / "kube-scheduler"),
                "--kubeconfig",
                str(kubeconfigs / "scheduler"),
                "--authentication-kubeconfig",
                str(kubeconfigs / "scheduler"),
                "--authorization-kubeconfig",
                str(kubeconfigs / "scheduler"),
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                str(ports["scheduler"]),
                "--leader-elect=false",
                "--profiling=false",
            ],
        ),
        ("kube-proxy", [str(bins / "kube-proxy"), "--config", str(STATE / "kube-proxy.yaml")]),
        ("coredns", [str(bins / "coredns"), "-conf", str(STATE / "Corefile")]),
        (
            "containerd",
            [str(bins / "containerd"), "--config", str(STATE / "containerd.toml")],
        ),
        (
            "kubelet",
            [
                str(bins / "kubelet"),
                "--config",
                str(STATE / "kubelet.yaml"),
                "--kubeconfig",
                str(kubeconfigs / "kubelet"),
                "--root-dir",
                str(STATE / "kubelet"),
                "--hostname-override",
                NODE,
                "--node-ip",
                GATEWAY,
            ],
        ),
    ]
