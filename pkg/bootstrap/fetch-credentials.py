#!/usr/bin/env python3
# Written by slipway's machine-controller. Fetches, once, what this machine's setup needs and its
# user-data must not carry (registry credentials, the proxy): the Secret that only the
# machine-controller's bootstrap tokens may read, into root-only files of a tmpfs directory.
# Like kubeadm join, it sends the bootstrap token only to an API server whose CA, read from
# kube-public/cluster-info, matches the pinned hash. Python 3, because cloud-init runs on it:
# the machine has it before anything is installed, and its standard library speaks TLS, JSON and
# base64. Usage: fetch-credentials CONFIG.json (see bootstrap.fetchConfig). Exit code 0: every
# file was written; 1: it says why on stdout, which goes to the console.
import base64
import hashlib
import json
import os
import re
import socket
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

LIMIT = 1 << 20  # a Secret is at most 1 MiB
RETRY_EVERY = 5


def say(msg):
    print("slipway-join: " + msg, flush=True)


class Failure(Exception):
    """An answer that asking again will not change."""


class Transient(Exception):
    """No answer, or one that may change: asked again until the deadline."""


def der(buf, i):
    """The DER element at i: its tag, where its content starts and where it ends."""
    tag, n, j = buf[i], buf[i + 1], i + 2
    if n & 0x80:
        k = n & 0x7F
        n, j = int.from_bytes(buf[j:j + k], "big"), j + k
    if j + n > len(buf):
        raise ValueError("truncated DER")
    return tag, j, j + n


def spki(cert):
    """The certificate's SubjectPublicKeyInfo, whole, as kubeadm's hash covers it."""
    _, start, _ = der(cert, 0)  # Certificate
    _, i, end = der(cert, start)  # TBSCertificate
    fields = []
    while i < end:
        tag, _, j = der(cert, i)
        fields.append((tag, i, j))
        i = j
    if fields and fields[0][0] == 0xA0:  # the explicit version
        fields = fields[1:]
    # serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo
    _, a, b = fields[5]
    return cert[a:b]


def get(opener, url, token=None):
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with opener.open(req, timeout=15) as resp:
            body = resp.read(LIMIT + 1)
    except urllib.error.HTTPError as e:
        return e.code, None
    except (urllib.error.URLError, OSError, socket.timeout) as e:
        reason = getattr(e, "reason", e)
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise Failure("the API server's certificate does not verify against the pinned cluster CA: %s" % reason.verify_message)
        raise Transient("cannot reach the API server at %s: %s" % (urllib.parse.urlsplit(url).netloc, reason))
    if len(body) > LIMIT:
        raise Failure("the answer from %s is over %d bytes" % (url, LIMIT))
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise Failure("the answer from %s is not a JSON object" % url)
    return 200, obj


def no_proxy():
    # The API endpoint is reached directly, as kubeadm join reaches it (slipway puts it in
    # NO_PROXY): never through a proxy the image's environment may name.
    return urllib.request.ProxyHandler({})


def cluster_ca(server, pin):
    """The cluster CA from kube-public/cluster-info, which anyone may read, if its public key
    matches the pin; nothing read before that check is trusted."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    opener = urllib.request.build_opener(no_proxy(), urllib.request.HTTPSHandler(context=ctx))
    code, body = get(opener, "https://%s/api/v1/namespaces/kube-public/configmaps/cluster-info" % server)
    if code in (404, 401, 403):
        raise Failure("kube-public/cluster-info is not readable at %s (HTTP %d): kubeadm publishes it for joining nodes" % (server, code))
    if code != 200:
        raise Transient("reading kube-public/cluster-info at %s: HTTP %d" % (server, code))
    kubeconfig = str((body.get("data") or {}).get("kubeconfig", ""))
    m = re.search(r"certificate-authority-data:\s*([A-Za-z0-9+/=]+)", kubeconfig)
    if not m:
        raise Failure("kube-public/cluster-info at %s names no CA" % server)
    bundle = base64.b64decode(m.group(1)).decode("ascii", "replace")
    for pem in re.findall(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", bundle, re.S):
        try:
            key = spki(ssl.PEM_cert_to_DER_cert(pem))
        except (ValueError, IndexError):
            continue
        if "sha256:" + hashlib.sha256(key).hexdigest() == pin.lower():
            return pem
    raise Failure("no CA in kube-public/cluster-info at %s matches the pinned hash %s: not sending the bootstrap token" % (server, pin))


def fetch(cfg, token):
    server, secret = cfg["server"], "%s/%s" % (cfg["namespace"], cfg["name"])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # Verified as the Go clients of kubeadm and the kubelet verify it, not stricter (Python
    # 3.13 turns on OpenSSL's strict checks by default).
    ctx.verify_flags &= ~getattr(ssl, "VERIFY_X509_STRICT", 0)
    ctx.load_verify_locations(cadata=cluster_ca(server, cfg["caCertHash"]))
    opener = urllib.request.build_opener(no_proxy(), urllib.request.HTTPSHandler(context=ctx))
    code, body = get(opener, "https://%s/api/v1/namespaces/%s/secrets/%s" % (server, cfg["namespace"], cfg["name"]), token)
    if code == 401:
        raise Failure("the API server at %s refused the bootstrap token (401 Unauthorized): it expired, or was deleted, "
                      "before this machine booted" % server)
    if code == 403:
        raise Failure("the bootstrap token may not read Secret %s (403 Forbidden): tokens of group %s may, by the "
                      "RoleBinding that slipway apply installs with the machine-controller; run slipway apply" % (secret, cfg["group"]))
    if code == 404:
        raise Failure("Secret %s is missing (404 Not Found): slipway apply writes it with the machine-controller; run slipway apply" % secret)
    if code != 200:
        raise Transient("reading Secret %s: HTTP %d" % (secret, code))
    data = body.get("data") or {}
    if not isinstance(data, dict):
        raise Failure("Secret %s has no data" % secret)
    return data


def write(directory, data, keys, secret):
    """Writes each of keys from data into directory, root-only, once all of them are there."""
    files = {}
    for key in keys:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", key):
            raise Failure("%r is not a file name" % key)
        if key not in data:
            raise Failure("Secret %s has no %s, which this machine's settings need: it was written for other settings "
                          "than the machine-controller rendered this machine with; run slipway apply, then delete this Machine" % (secret, key))
        try:
            files[key] = base64.b64decode(data[key], validate=True)
        except (TypeError, ValueError):
            raise Failure("Secret %s holds %s in a form that is not base64" % (secret, key))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    for key, content in files.items():
        path = os.path.join(directory, key)
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) != 2:
        say("usage: fetch-credentials CONFIG.json")
        return 2
    with open(argv[1]) as f:
        cfg = json.load(f)
    secret = "%s/%s" % (cfg["namespace"], cfg["name"])
    deadline = time.monotonic() + cfg.get("timeoutSeconds", 300)
    said = None
    while True:
        try:
            data = fetch(cfg, cfg["token"])
            write(cfg["dir"], data, cfg["keys"], secret)
            break
        except Failure as e:
            say("FAILED to fetch the registry credentials and proxy from Secret %s: %s" % (secret, e))
            return 1
        except Transient as e:
            if time.monotonic() >= deadline:
                say("FAILED to fetch the registry credentials and proxy from Secret %s: %s (gave up after %d s)"
                    % (secret, e, cfg.get("timeoutSeconds", 300)))
                return 1
            if str(e) != said:
                say("%s; asking again every %d s" % (e, RETRY_EVERY))
                said = str(e)
            time.sleep(max(0, min(RETRY_EVERY, deadline - time.monotonic())))
    say("fetched %s from Secret %s into %s" % (", ".join(cfg["keys"]), secret, cfg["dir"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
